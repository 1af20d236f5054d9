# our kernels here: gemm 374.2 TFLOP/s, stream 4348 GB/s, pace 3.72 us, batchnorm-like 1892 GB/s, layernorm-like 1598 GB/s, softmax-like 1319 GB/s
# gradsync GPU profile (the cost model's; see README, Compute model)
name = calibrated
source = calibrated on NVIDIA H200 (h200 shares)
# achieved GEMM TFLOP/s: fp32 tf32 bf16 fp16
matrix_tflops = 51.4443 403.485 786.795 786.795
# fixed microseconds of a GEMM
matrix_t0_us = 8 5 3 3
# convolution rate as a share of the GEMM rate
conv_eff = 0.605 0.292 0.255 0.255
# convolution gradients' rate as a share of the GEMM rate
conv_bwd_eff = 0.374 0.26 0.241 0.241
# rate factor of 3x3 convolutions (Winograd)
conv3_gain = 1.6 1.25 1.18 1.18
# fused attention rate as a share of the GEMM rate
attn_eff = 0.38 0.047 0.18 0.18
# GEMM share for even, unaligned inner dimensions
align2_eff = 1 1 0.33 0.33
# GEMM share for odd inner dimensions
align1_eff = 1 0.31 0.12 0.12
# streaming bandwidth, GB/s
hbm_gbps = 4886.59
# shortest kernel, microseconds
floor_us = 0.975076
# host microseconds per eager kernel (forward)
launch_gap_us = 39.2
# backward's host time per kernel as a share of launch_gap_us
bwd_gap_share = 0.89
# share of hbm_gbps, 32-bit and 16-bit activations
mem_eff.elementwise = 0.92 0.85
# share of hbm_gbps, 32-bit and 16-bit activations
mem_eff.norm = 0.45 0.45
# share of hbm_gbps, 32-bit and 16-bit activations
mem_eff.batchnorm = 0.42 0.13
# share of hbm_gbps, 32-bit and 16-bit activations
mem_eff.softmax = 0.65 0.5
# share of hbm_gbps, 32-bit and 16-bit activations
mem_eff.reduce = 0.6 0.6
# share of hbm_gbps, 32-bit and 16-bit activations
mem_eff.embedding = 0.3 0.3
# share of hbm_gbps, 32-bit and 16-bit activations
mem_eff.cast = 0.7 0.7
