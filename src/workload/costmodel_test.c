/* The cost model's pure functions, the profile table and file format, AMP's ready order. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "workload/costmodel.h"
#include "workload/ddp.h"
#include "workload/gpu_profile.h"
#include "workload/model.h"
#include "util/test_tmpdir.h"

static struct gpu_profile flat(void)
{
	struct gpu_profile g;

	memset(&g, 0, sizeof(g));
	for (int i = 0; i < MX_COUNT; i++) {
		g.matrix_tflops[i] = 100;
		g.align1_eff[i] = 0.1;
		g.align2_eff[i] = 0.5;
		g.conv_eff[i] = 0.5;
		g.conv_bwd_eff[i] = 0.25;
		g.attn_eff[i] = 0.5;
	}
	g.matrix_tflops[MX_BF16] = 1000;
	g.hbm_gbps = 1000;
	g.floor_us = 2;
	g.launch_gap_us = 10;
	g.bwd_gap_share = 0.5;
	g.launch_us = 3;
	return g;
}

static void test_op_times(void **state)
{
	struct gpu_profile g = flat();
	struct cost_params fp32 = { &g, PREC_FP32, -1 }, amp = { &g, PREC_AMP_BF16, -1 };
	struct op gemm = { .cls = OPC_GEMM, .kernels = 1, .flops = 1e12, .align_dim = 4096 };
	struct op mem = { .cls = OPC_ELEM, .kernels = 2, .calls = 1, .bytes = 1e9 };
	double host = 0, gpu = 0;

	(void)state;
	/* 1 TFLOP at 100 TFLOP/s = 10 ms, plus the 2 us floor */
	assert_float_equal(cost_op_gpu_s(&fp32, &gemm), 10e-3 + 2e-6, 1e-12);
	/* bf16 unit: 1 ms; an odd inner dimension takes the 2-byte path (0.1), an even
	 * unaligned one the 4-byte path (0.5); fp32 SIMT does not care */
	assert_float_equal(cost_op_gpu_s(&amp, &gemm), 1e-3 + 2e-6, 1e-12);
	gemm.align_dim = 50257;
	assert_float_equal(cost_op_gpu_s(&amp, &gemm), 10e-3 + 2e-6, 1e-12);
	/* its gradients' GEMMs have a share of their own where the profile gives one */
	gemm.bwd = 1;
	assert_float_equal(cost_op_gpu_s(&amp, &gemm), 10e-3 + 2e-6, 1e-12);
	g.align1_bwd_eff[MX_BF16] = 0.2;
	assert_float_equal(cost_op_gpu_s(&amp, &gemm), 5e-3 + 2e-6, 1e-12);
	gemm.bwd = 0;
	assert_float_equal(cost_op_gpu_s(&amp, &gemm), 10e-3 + 2e-6, 1e-12);
	gemm.align_dim = 30522;
	assert_float_equal(cost_op_gpu_s(&amp, &gemm), 2e-3 + 2e-6, 1e-12);
	assert_float_equal(cost_op_gpu_s(&fp32, &gemm), 10e-3 + 2e-6, 1e-12);
	/* fused attention: attn_eff (0.5: 20 ms), its backward's own share where set, and
	 * the odd-sequence gains where the sequence is no multiple of 8 */
	struct op attn = { .cls = OPC_ATTN, .kernels = 1, .flops = 1e12, .align_dim = 512 };

	assert_float_equal(cost_op_gpu_s(&fp32, &attn), 20e-3 + 2e-6, 1e-12);
	attn.bwd = 1;
	assert_float_equal(cost_op_gpu_s(&fp32, &attn), 20e-3 + 2e-6, 1e-12);
	g.attn_bwd_eff[MX_FP32] = 0.25;
	assert_float_equal(cost_op_gpu_s(&fp32, &attn), 40e-3 + 2e-6, 1e-12);
	g.attn_bwd_odd_gain[MX_FP32] = 2;
	assert_float_equal(cost_op_gpu_s(&fp32, &attn), 40e-3 + 2e-6, 1e-12);
	attn.align_dim = 197;
	assert_float_equal(cost_op_gpu_s(&fp32, &attn), 20e-3 + 2e-6, 1e-12);
	attn.bwd = 0;
	assert_float_equal(cost_op_gpu_s(&fp32, &attn), 20e-3 + 2e-6, 1e-12);
	g.attn_odd_gain[MX_FP32] = 0.5;
	assert_float_equal(cost_op_gpu_s(&fp32, &attn), 40e-3 + 2e-6, 1e-12);
	/* 1 GB at 1000 GB/s (share 0 = 1): 1 ms, two kernels' floors */
	assert_float_equal(cost_op_gpu_s(&fp32, &mem), 1e-3 + 4e-6, 1e-12);
	g.mem_eff[OPC_ELEM][0] = 0.5;
	g.mem_eff[OPC_ELEM][1] = 0.25;
	assert_float_equal(cost_op_gpu_s(&fp32, &mem), 2e-3 + 4e-6, 1e-12);
	assert_float_equal(cost_op_gpu_s(&amp, &mem), 4e-3 + 4e-6, 1e-12);
	/* host: 10 us per forward call, half that per backward node, 3 us per kernel
	 * launched; the GPU waits for it */
	assert_float_equal(cost_op_host_s(&fp32, &mem), 10e-6 + 2 * 3e-6, 1e-15);
	mem.bwd = 1;
	assert_float_equal(cost_op_host_s(&fp32, &mem), 5e-6 + 2 * 3e-6, 1e-15);
	/* a library call's kernels past the first (cuDNN's transposes) at sublaunch_us; as
	 * many dispatched launches as calls (layout copies, one call each) */
	g.sublaunch_us = 1;
	assert_float_equal(cost_op_host_s(&fp32, &mem), 5e-6 + 3e-6 + 1e-6, 1e-15);
	mem.calls = 2;
	assert_float_equal(cost_op_host_s(&fp32, &mem), 10e-6 + 2 * 3e-6, 1e-15);
	mem.calls = 0;
	assert_float_equal(cost_op_host_s(&fp32, &mem), 3e-6 + 1e-6, 1e-15);
	mem.calls = 1;
	g.sublaunch_us = 0;
	mem.bytes = 0;
	assert_float_equal(cost_issue(&fp32, &mem, &host, &gpu, NULL), 11e-6 + 4e-6, 1e-15);
	assert_float_equal(host, 11e-6, 1e-15);
	/* the GPU's dispatch gap: the op's second kernel waits for it behind its first; a
	 * late host hides the first kernel's (it starts when it is launched, at 11 us)... */
	g.kernel_gap_us = 0.5;
	host = 0;
	gpu = 0;
	assert_float_equal(cost_issue(&fp32, &mem, &host, &gpu, NULL), 11e-6 + 4e-6 + 0.5e-6, 1e-15);
	/* ...a GPU still busy (15.5 us, the host issued the next at 11 us) does not; the span
	 * it reports is the op's queued span, priced once */
	host = 0;
	double span = 0;
	assert_float_equal(cost_issue(&fp32, &mem, &host, &gpu, &span),
			   15.5e-6 + 0.5e-6 + 4.5e-6, 1e-15);
	assert_float_equal(span, 0.5e-6 + 4.5e-6, 1e-15);
	g.kernel_gap_us = 0;
	/* an explicit gap of 0 (CUDA graphs): no host time */
	fp32.launch_gap_us = 0;
	assert_float_equal(cost_op_host_s(&fp32, &mem), 0, 1e-15);
}

/* A linear's forward with its bias below the profile's rows runs the bias-epilogue share;
 * at or above them, in backward, without a bias or where the share is not measured
 * (0: here 16-bit), the plain GEMM rate. Its gradient GEMMs have a share of their own. */
/* Attention by its tiles: the busiest SM with the longest tiles first. */
static void test_attn_tiles(void **state)
{
	struct gpu_profile g = flat();
	struct cost_params fp32 = { &g, PREC_FP32, -1 };
	/* 12 rows of 512: 4 tiles a row, 4 blocks a tile, at 4 x 128^2 x 64 FLOPs a block */
	struct op attn = { .cls = OPC_ATTN, .kernels = 1, .attn_bh = 12, .head_dim = 64,
			   .align_dim = 512, .flops = 4.0 * 12 * 512 * 512 * 64 };
	double block = 4.0 * 128 * 128 * 64 / (100e12 * 0.5 / 132);

	(void)state;
	/* fewer tiles than SMs: the longest one's time (a tile's fixed cost, 4 blocks) */
	assert_float_equal(attn_tiles_s(1, 256, false, 132, 1e-6, 1e-6), 3e-6, 1e-15);
	assert_float_equal(attn_tiles_s(12, 512, false, 132, 0, 1), 4, 1e-12);
	/* two whole rounds of 132 tiles of 2 blocks */
	assert_float_equal(attn_tiles_s(132, 256, false, 132, 0.5, 1), 2 * 2.5, 1e-12);
	/* causal, 2 SMs: tiles of 4, 3, 2, 1 blocks go 4 | 3, 4 | 3 + 2, 4 + 1 | 5 */
	assert_float_equal(attn_tiles_s(1, 512, true, 2, 0, 1), 5, 1e-12);
	/* causal, as many rows as SMs: sorted, every SM would walk 4 + 3 + 2 + 1 blocks and
	 * 4 tiles (11); in the grid's order the SMs that took the short tiles of the first 33
	 * rows take the next rows' long ones, and the busiest ends at 13.5 (a heap simulation
	 * in Python, independent of this one, gives the same) */
	assert_float_equal(attn_tiles_s(132, 512, true, 132, 0.25, 1), 13.5, 1e-12);
	/* past ATTN_GRID_TILES tiles, sorted: 2 x 65536 rows of one tile of one block */
	assert_float_equal(attn_tiles_s(2 * ATTN_GRID_TILES, 100, true, 128, 0, 1),
			   2.0 * ATTN_GRID_TILES / 128, 1e-9);
	/* a sequence short of a tile pads it to one; nothing to do, or SMs out of range: 0 */
	assert_float_equal(attn_tiles_s(1, 100, false, 4, 0, 1), 1, 1e-12);
	assert_true(attn_tiles_s(0, 512, false, 132, 1, 1) == 0);
	assert_true(attn_tiles_s(1, 512, false, 0, 1, 1) == 0);
	assert_true(attn_tiles_s(1, 512, false, ATTN_MAX_SMS + 1, 1, 1) == 0);
	/* the op: without sm_count the rate model (flops / (rate x attn_eff)) */
	assert_float_equal(cost_op_gpu_s(&fp32, &attn), attn.flops / 50e12 + 2e-6, 1e-12);
	/* with it, the tiles: 48 tiles on 132 SMs, each 4 blocks after its 1 us */
	g.sm_count = 132;
	g.attn_tile_us[MX_FP32] = 1;
	assert_float_equal(cost_op_gpu_s(&fp32, &attn), 1e-6 + 4 * block + 2e-6, 1e-12);
	/* causal: half the FLOPs for half the pairs, so the same block; tiles of 4..1 */
	attn.causal = 1;
	attn.flops /= 2;
	assert_float_equal(cost_op_gpu_s(&fp32, &attn), 1e-6 + 4 * block + 2e-6, 1e-12);
	/* backward: its own tile time; 2.5x the FLOPs, 2.5x the block */
	attn.bwd = 1;
	attn.flops *= 2.5;
	g.attn_bwd_tile_us[MX_FP32] = 3;
	assert_float_equal(cost_op_gpu_s(&fp32, &attn), 3e-6 + 4 * 2.5 * block + 2e-6, 1e-12);
	/* a head of 128 at a width exponent of 1: twice the share for twice the FLOPs, the
	 * same blocks' time; the exponent leaves width 64 as it was */
	g.attn_bwd_width_exp[MX_FP32] = 1;
	attn.head_dim = 128;
	attn.flops *= 2;
	assert_float_equal(cost_op_gpu_s(&fp32, &attn), 3e-6 + 4 * 2.5 * block + 2e-6, 1e-12);
	attn.head_dim = 64;
	assert_float_equal(cost_op_gpu_s(&fp32, &attn), 3e-6 + 4 * 2 * 2.5 * block + 2e-6,
			   1e-12);
	attn.flops /= 2;
	/* a width the exponent would lift past the GEMM's rate stops at it: 512 wide, 8x the
	 * FLOPs at a share of 1 (not 8 x 0.5) */
	attn.head_dim = 512;
	attn.flops *= 8;
	assert_float_equal(cost_op_gpu_s(&fp32, &attn), 3e-6 + 4 * 4 * 2.5 * block + 2e-6,
			   1e-12);
	attn.head_dim = 64;
	attn.flops /= 8;
	g.attn_bwd_width_exp[MX_FP32] = 0;
	/* an op that does not say its tiles: the rate model */
	attn.attn_bh = 0;
	assert_float_equal(cost_op_gpu_s(&fp32, &attn), attn.flops / 50e12 + 2e-6, 1e-12);
}

static void test_bias_gemm(void **state)
{
	struct gpu_profile g = flat();
	struct cost_params fp32 = { &g, PREC_FP32, -1 }, amp = { &g, PREC_AMP_BF16, -1 };
	struct cost_params tf32 = { &g, PREC_TF32, -1 };
	struct op gemm = { .cls = OPC_GEMM, .kernels = 1, .flops = 1e12, .align_dim = 768,
			   .bias_rows = 1024 };

	(void)state;
	/* 132 SMs: 3152 x 1024 outputs are 200 tiles of 128 (two waves, 200 / 264 filled) or
	 * 800 of 64 (seven waves, 800 / 924) at half the rate: the 128s */
	g.sm_count = 132;
	g.bias_gemm_share[MX_FP32] = 0.5;
	gemm.bias_rows = 3152;
	gemm.bias_cols = 1024;
	assert_float_equal(cost_op_gpu_s(&fp32, &gemm), 10e-3 / (200.0 / 264) + 2e-6, 1e-12);
	/* 16-bit and tf32 have no share: the full rate */
	assert_float_equal(cost_op_gpu_s(&amp, &gemm), 1e-3 + 2e-6, 1e-12);
	/* 4096 x 1024: 256 tiles of 128 in two waves, 256 / 264 */
	gemm.bias_rows = 4096;
	assert_float_equal(cost_op_gpu_s(&fp32, &gemm), 10e-3 / (256.0 / 264) + 2e-6, 1e-12);
	/* 1024 x 1024: 64 tiles of 128 fill 64 / 132; 256 of 64 fill 256 / 264, at 0.9 the
	 * faster */
	g.bias_gemm_share[MX_FP32] = 0.9;
	gemm.bias_rows = 1024;
	assert_float_equal(cost_op_gpu_s(&fp32, &gemm), 10e-3 / (0.9 * 256 / 264) + 2e-6, 1e-12);
	assert_float_equal(gemm_wave_share(1024, 1024, 132, 0.9), 0.9 * 256 / 264, 1e-12);
	assert_float_equal(gemm_wave_share(128 * 132, 128, 132, 0.9), 1, 1e-12);
	/* no SM count, or no output's shape: the full rate */
	assert_float_equal(gemm_wave_share(1024, 1024, 0, 0.9), 1, 1e-12);
	assert_float_equal(gemm_wave_share(0, 1024, 132, 0.9), 1, 1e-12);
	gemm.bias_cols = 0;
	assert_float_equal(cost_op_gpu_s(&fp32, &gemm), 10e-3 + 2e-6, 1e-12);
	gemm.bias_cols = 1024;
	gemm.bwd = 1;
	assert_float_equal(cost_op_gpu_s(&fp32, &gemm), 10e-3 + 2e-6, 1e-12);
	gemm.bwd = 0;
	gemm.bias_rows = 0;
	assert_float_equal(cost_op_gpu_s(&fp32, &gemm), 10e-3 + 2e-6, 1e-12);
	/* a linear's gradient GEMMs below their rows: their own share, never forward's */
	g.grad_gemm_share[MX_FP32] = 0.5;
	g.grad_gemm_rows[MX_FP32] = 4096;
	gemm.grad_rows = 1024;
	assert_float_equal(cost_op_gpu_s(&fp32, &gemm), 10e-3 + 2e-6, 1e-12);
	gemm.bwd = 1;
	assert_float_equal(cost_op_gpu_s(&fp32, &gemm), 20e-3 + 2e-6, 1e-12);
	assert_float_equal(cost_op_gpu_s(&amp, &gemm), 1e-3 + 2e-6, 1e-12);
	gemm.grad_rows = 4096;
	assert_float_equal(cost_op_gpu_s(&fp32, &gemm), 10e-3 + 2e-6, 1e-12);
	/* ... of a layer's weight: a weight of grad_gemm_weight elements and more (a
	 * vocabulary head; 1e12 FLOPs over 1024 rows: 4.9e8) fills the GPU at any rows */
	gemm.grad_rows = 1024;
	g.grad_gemm_weight[MX_FP32] = 1e9;
	assert_float_equal(cost_op_gpu_s(&fp32, &gemm), 20e-3 + 2e-6, 1e-12);
	g.grad_gemm_weight[MX_FP32] = 4.8e8;
	assert_float_equal(cost_op_gpu_s(&fp32, &gemm), 10e-3 + 2e-6, 1e-12);
	/* an unaligned dimension's kernel keeps its own share, the gradients' too: TF32 at
	 * an odd width runs at align1_bwd_eff, not that times grad_gemm_share */
	g.grad_gemm_weight[MX_FP32] = 0;
	g.grad_gemm_share[MX_TF32] = 0.5;
	g.grad_gemm_rows[MX_TF32] = 4096;
	g.align1_bwd_eff[MX_TF32] = 0.25;
	assert_float_equal(cost_op_gpu_s(&tf32, &gemm), 20e-3 + 2e-6, 1e-12);
	/* the weight gradient's own share where the profile has one */
	g.wgrad_gemm_share[MX_TF32] = 0.25;
	gemm.pass = CP_WGRAD;
	assert_float_equal(cost_op_gpu_s(&tf32, &gemm), 40e-3 + 2e-6, 1e-12);
	gemm.pass = CP_DGRAD;
	assert_float_equal(cost_op_gpu_s(&tf32, &gemm), 20e-3 + 2e-6, 1e-12);
	gemm.align_dim = 767;
	assert_float_equal(cost_op_gpu_s(&tf32, &gemm), 40e-3 + 2e-6, 1e-12);
	gemm.bwd = 0;
	assert_float_equal(cost_op_gpu_s(&tf32, &gemm), 100e-3 + 2e-6, 1e-12);
}

/* Autocast's forward casts have no call of their own (launch only); calls that launch
 * nothing cost host time only; BatchNorm's share falls with few channels; pooling counts
 * 32-bit elements at any precision; layout copies have a share of their own. */
/* Convolutions by shape: the profile's row for the pass and kind where it has one (a share,
 * the GEMM view's size at half the rate, GFLOP at half the rate), else one share per
 * direction; kinds by window and stride (and a small 3x3's output side). */
static void test_conv_shape(void **state)
{
	struct gpu_profile g = flat();
	struct cost_params fp32 = { &g, PREC_FP32, -1 };
	struct op wg = { .cls = OPC_CONV, .bwd = 1, .pass = CP_WGRAD, .kernels = 1,
			 .flops = 1e12, .window = 1, .stride = 1, .inner = 4096 };
	struct conv_row *r = &g.conv_shape[MX_FP32][CP_WGRAD];

	(void)state;
	assert_int_equal(conv_kind_of(1, 1, 56), CK_1S1);
	assert_int_equal(conv_kind_of(1, 2, 28), CK_1S2);
	assert_int_equal(conv_kind_of(3, 1, 14), CK_3S1);
	assert_int_equal(conv_kind_of(3, 1, 7), CK_3S1_SMALL);
	assert_int_equal(conv_kind_of(3, 2, 7), CK_3S2);
	assert_int_equal(conv_kind_of(1, 1, 7), CK_1S1_SMALL);
	assert_int_equal(conv_kind_of(1, 1, 14), CK_1S1);
	assert_int_equal(conv_kind_of(1, 2, 7), CK_1S2);
	assert_int_equal(conv_kind_of(7, 2, 112), CK_7S2);
	assert_int_equal(conv_kind_of(16, 16, 14), -1);
	assert_int_equal(conv_kind_of(3, 3, 7), -1);
	/* no row: 100 TFLOP/s x conv_bwd_eff 0.25 = 40 ms, plus the floor */
	assert_float_equal(cost_op_gpu_s(&fp32, &wg), 40e-3 + 2e-6, 1e-12);
	/* a window past 7 (ViT's patches): its gradients at patch_bwd_eff where set, its
	 * forward at patch_eff where set (else conv_eff) */
	struct op patch = wg;

	patch.window = 16;
	patch.stride = 16;
	g.patch_bwd_eff[MX_FP32] = 0.1;
	assert_float_equal(cost_op_gpu_s(&fp32, &patch), 100e-3 + 2e-6, 1e-12);
	patch.bwd = 0;
	patch.pass = CP_FWD;
	assert_float_equal(cost_op_gpu_s(&fp32, &patch), 20e-3 + 2e-6, 1e-12);
	g.patch_eff[MX_FP32] = 0.2;
	assert_float_equal(cost_op_gpu_s(&fp32, &patch), 50e-3 + 2e-6, 1e-12);
	g.patch_eff[MX_FP32] = 0;
	g.patch_bwd_eff[MX_FP32] = 0;
	/* share 0.5 and a weight of 4096 elements at half the rate: 100 x 0.5 x 0.5 = 25
	 * TFLOP/s; 1 TFLOP of saturation halves it again */
	r->share[CK_1S1] = 0.5;
	r->inner_half[CK_1S1] = 4096;
	assert_float_equal(cost_op_gpu_s(&fp32, &wg), 40e-3 + 2e-6, 1e-12);
	r->inner_half[CK_1S1] = 0;
	assert_float_equal(cost_op_gpu_s(&fp32, &wg), 20e-3 + 2e-6, 1e-12);
	r->gflop_half = 1000;
	assert_float_equal(cost_op_gpu_s(&fp32, &wg), 40e-3 + 2e-6, 1e-12);
	/* few output pixels halve it again where the row has pixels_half; an op that does
	 * not know its pixels (0) keeps the rate */
	r->pixels_half = 392;
	assert_float_equal(cost_op_gpu_s(&fp32, &wg), 40e-3 + 2e-6, 1e-12);
	wg.pixels = 392;
	assert_float_equal(cost_op_gpu_s(&fp32, &wg), 80e-3 + 2e-6, 1e-12);
	wg.pixels = 0;
	r->pixels_half = 0;
	/* another pass or kind of the same op keeps its own (here: none, one share) */
	wg.stride = 2;
	assert_float_equal(cost_op_gpu_s(&fp32, &wg), 40e-3 + 2e-6, 1e-12);
	wg.stride = 1;
	wg.pass = CP_DGRAD;
	assert_float_equal(cost_op_gpu_s(&fp32, &wg), 40e-3 + 2e-6, 1e-12);
	wg.window = 16;
	wg.stride = 16;
	wg.pass = CP_WGRAD;
	assert_float_equal(cost_op_gpu_s(&fp32, &wg), 40e-3 + 2e-6, 1e-12);
	/* a 3x3 at stride 1 over 7 x 7 takes the 3x3 entry while its own is 0, then its own */
	r->gflop_half = 0;
	r->share[CK_3S1] = 0.5;
	wg.window = 3;
	wg.stride = 1;
	wg.side = 7;
	assert_float_equal(cost_op_gpu_s(&fp32, &wg), 20e-3 + 2e-6, 1e-12);
	r->share[CK_3S1_SMALL] = 0.25;
	assert_float_equal(cost_op_gpu_s(&fp32, &wg), 40e-3 + 2e-6, 1e-12);
	wg.side = 14;
	assert_float_equal(cost_op_gpu_s(&fp32, &wg), 20e-3 + 2e-6, 1e-12);
	/* a 1x1 over 7 x 7 likewise: the 1x1 entry while its own is 0 */
	r->share[CK_1S1] = 0.5;
	wg.window = 1;
	wg.side = 7;
	assert_float_equal(cost_op_gpu_s(&fp32, &wg), 20e-3 + 2e-6, 1e-12);
	r->share[CK_1S1_SMALL] = 1.0;
	assert_float_equal(cost_op_gpu_s(&fp32, &wg), 10e-3 + 2e-6, 1e-12);
}

static void test_op_classes(void **state)
{
	struct gpu_profile g = flat();
	struct cost_params fp32 = { &g, PREC_FP32, -1 }, amp = { &g, PREC_AMP_BF16, -1 };
	struct op cast = { .cls = OPC_CAST, .kernels = 1, .calls = 0, .bytes = 1e6 };
	struct op views = { .cls = OPC_ELEM, .kernels = 0, .calls = 4 };
	struct op bn = { .cls = OPC_BN, .kernels = 2, .calls = 1, .bytes = 1e9, .channels = 64 };
	struct op pool = { .cls = OPC_POOL, .kernels = 1, .calls = 1, .bytes = 1e9 };

	(void)state;
	assert_float_equal(cost_op_host_s(&amp, &cast), 3e-6, 1e-15);
	assert_float_equal(cost_op_host_s(&amp, &views), 40e-6, 1e-15);
	assert_float_equal(cost_op_gpu_s(&amp, &views), 0, 1e-15);
	g.mem_eff[OPC_BN][0] = 0.5;
	g.mem_eff[OPC_BN][1] = 0.25;
	/* no channel constant: the class share alone (1 GB at 500 GB/s) */
	assert_float_equal(cost_op_gpu_s(&fp32, &bn), 2e-3 + 4e-6, 1e-12);
	/* half the share at bn_channels_half channels, two thirds at twice that */
	g.bn_channels_half[0] = 64;
	g.bn_channels_half[1] = 32;
	assert_float_equal(cost_op_gpu_s(&fp32, &bn), 4e-3 + 4e-6, 1e-12);
	assert_float_equal(cost_op_gpu_s(&amp, &bn), 4e-3 * 1.5 + 4e-6, 1e-12);
	/* a time per channel besides the bytes: 64 channels of 1 us */
	g.bn_channel_ns[0] = 1000;
	assert_float_equal(cost_op_gpu_s(&fp32, &bn), 4e-3 + 64e-6 + 4e-6, 1e-12);
	/* backward: the forward's share, half and nothing per channel until it has its own */
	bn.bwd = 1;
	assert_float_equal(cost_op_gpu_s(&fp32, &bn), 4e-3 + 4e-6, 1e-12);
	g.bn_bwd_share[0] = 1.0;
	g.bn_bwd_channels_half[0] = 16;
	g.bn_bwd_channel_ns[0] = 500;
	/* 1 GB at 1 TB/s x 64 / 80 = 800 GB/s, 32 us for the channels */
	assert_float_equal(cost_op_gpu_s(&fp32, &bn), 1.25e-3 + 32e-6 + 4e-6, 1e-12);
	assert_float_equal(cost_op_gpu_s(&amp, &bn), 4e-3 * 1.5 + 4e-6, 1e-12);
	/* fp16 autocast's BatchNorm is cuDNN's ([0]) over its 16-bit bytes; a bf16 model's
	 * the native kernels' ([1]) as bf16 autocast's */
	struct cost_params fp16 = { &g, PREC_AMP_FP16, -1 }, bf16 = { &g, PREC_BF16, -1 };

	assert_float_equal(cost_op_gpu_s(&fp16, &bn), cost_op_gpu_s(&fp32, &bn), 1e-15);
	assert_float_equal(cost_op_gpu_s(&bf16, &bn), cost_op_gpu_s(&amp, &bn), 1e-15);
	/* cuDNN over 16-bit elements at bn_half_gain of its share (backward's here); the
	 * native kernels never */
	g.bn_half_gain[1] = 0.5;
	assert_float_equal(cost_op_gpu_s(&fp16, &bn), 2.5e-3 + 32e-6 + 4e-6, 1e-12);
	assert_float_equal(cost_op_gpu_s(&fp32, &bn), 1.25e-3 + 32e-6 + 4e-6, 1e-12);
	assert_float_equal(cost_op_gpu_s(&bf16, &bn), cost_op_gpu_s(&amp, &bn), 1e-15);
	g.bn_half_gain[1] = 0;
	/* BatchNorm's own bandwidth where the profile gives one: twice it, half the time */
	g.bn_hbm_gbps = 2 * g.hbm_gbps;
	assert_float_equal(cost_op_gpu_s(&fp32, &bn), 1.25e-3 / 2 + 32e-6 + 4e-6, 1e-12);
	g.bn_hbm_gbps = 0;
	assert_true(precision_bn_cudnn(PREC_FP32) && precision_bn_cudnn(PREC_TF32) &&
		    precision_bn_cudnn(PREC_AMP_FP16));
	assert_false(precision_bn_cudnn(PREC_AMP_BF16) || precision_bn_cudnn(PREC_BF16));
	g.mem_eff[OPC_POOL][0] = 0.5;
	g.mem_eff[OPC_POOL][1] = 0.1;
	assert_float_equal(cost_op_gpu_s(&amp, &pool), cost_op_gpu_s(&fp32, &pool), 1e-15);
	assert_float_equal(cost_op_gpu_s(&fp32, &pool), 2e-3 + 2e-6, 1e-12);
	/* a layout copy streams at the copy class's share, not a cast's */
	struct op copy = { .cls = OPC_COPY, .kernels = 1, .calls = 1, .bytes = 1e9 };

	g.mem_eff[OPC_CAST][1] = 0.5;
	g.mem_eff[OPC_COPY][1] = 0.25;
	cast.bytes = 1e9;
	assert_float_equal(cost_op_gpu_s(&amp, &copy), 4e-3 + 2e-6, 1e-12);
	assert_float_equal(cost_op_gpu_s(&amp, &cast), 2e-3 + 2e-6, 1e-12);
	/* a bias gradient's column sum: colsum_share scaled by its columns and rows; an op
	 * of the class without them (nll) keeps the class's share */
	struct op sum = { .cls = OPC_REDUCE, .bwd = 1, .kernels = 1, .calls = 0, .bytes = 1e9,
			  .channels = 100, .rows = 300 };

	g.mem_eff[OPC_REDUCE][0] = 0.5;
	assert_float_equal(cost_op_gpu_s(&fp32, &sum), 2e-3 + 2e-6, 1e-12);
	g.colsum_share[0] = 1.0;
	g.colsum_half[0] = 100;
	g.colsum_half[1] = 300;
	assert_float_equal(cost_op_gpu_s(&fp32, &sum), 4e-3 + 2e-6, 1e-12);
	sum.channels = 300;
	assert_float_equal(cost_op_gpu_s(&fp32, &sum), 8e-3 / 3 + 2e-6, 1e-12);
	sum.rows = 0;
	assert_float_equal(cost_op_gpu_s(&fp32, &sum), 2e-3 + 2e-6, 1e-12);
	/* autocast's residual add (a 16-bit branch into the fp32 stream) at promote_share;
	 * the class's share where the profile has none */
	struct op add = { .cls = OPC_ELEM, .kernels = 1, .calls = 1, .bytes = 1e9, .promote = 1 };

	g.mem_eff[OPC_ELEM][1] = 0.8;
	assert_float_equal(cost_op_gpu_s(&amp, &add), 1.25e-3 + 2e-6, 1e-12);
	g.promote_share = 0.5;
	assert_float_equal(cost_op_gpu_s(&amp, &add), 2e-3 + 2e-6, 1e-12);
}

/* the memory time of o alone: its time less its kernels' floor */
static double mem_s(const struct cost_params *cp, struct op o)
{
	double t = cost_op_gpu_s(cp, &o);

	o.bytes = 0;
	return t - cost_op_gpu_s(cp, &o);
}

static void test_loss_and_casts(void **state)
{
	struct gpu_profile g = flat();
	struct cost_params fp32 = { &g, PREC_FP32, -1 }, amp = { &g, PREC_AMP_BF16, -1 };
	struct op up = { .cls = OPC_CAST, .bwd = 1, .kernels = 1, .calls = 1, .bytes = 1e9,
			 .promote = 1 };
	struct op down = up;
	struct op sm = { .cls = OPC_SOFTMAX, .bwd = 1, .kernels = 1, .calls = 1, .bytes = 1e9 };
	struct op smf = sm;

	(void)state;
	/* a cast up to fp32 runs the unrolled kernel: promote_share, or widen_share where
	 * the profile has one; a cast down keeps the class's share */
	down.promote = 0;
	g.mem_eff[OPC_CAST][1] = 0.5;
	g.promote_share = 0.25;
	assert_float_equal(mem_s(&amp, down), 2e-3, 1e-12);
	assert_float_equal(mem_s(&amp, up), 4e-3, 1e-12);
	g.widen_share = 0.125;
	assert_float_equal(mem_s(&amp, up), 8e-3, 1e-12);
	/* log_softmax's backward: the class's share times softmax_bwd_gain of its width */
	g.mem_eff[OPC_SOFTMAX][0] = 0.25;
	g.mem_eff[OPC_SOFTMAX][1] = 0.5;
	assert_float_equal(mem_s(&amp, sm), 2e-3, 1e-12);
	g.softmax_bwd_gain[1] = 1.5;
	assert_float_equal(mem_s(&amp, sm), 2e-3 / 1.5, 1e-12);
	/* an op on fp32 data under autocast (logits made fp32) takes the 32-bit share */
	smf.f32 = 1;
	assert_float_equal(mem_s(&amp, smf), mem_s(&fp32, sm), 1e-15);
	assert_float_equal(mem_s(&amp, smf), 4e-3, 1e-12);
	/* its forward over an odd class count: times softmax_odd_gain; even: as it is */
	smf.bwd = 0;
	smf.align_dim = 50257;
	g.softmax_odd_gain[0] = 0.5;
	assert_float_equal(mem_s(&amp, smf), 8e-3, 1e-12);
	smf.align_dim = 30522;
	assert_float_equal(mem_s(&amp, smf), 4e-3, 1e-12);
}

static void test_precision_names(void **state)
{
	(void)state;
	for (int p = 0; p < PREC_COUNT; p++)
		assert_int_equal(precision_find(precision_name(p)), p);
	assert_int_equal(precision_find("fp8"), -1);
	assert_true(precision_is_amp(PREC_AMP_BF16));
	assert_false(precision_is_amp(PREC_BF16));
	assert_int_equal(precision_act_bytes(PREC_TF32), 4);
	assert_int_equal(precision_act_bytes(PREC_BF16), 2);
	assert_int_equal(precision_matrix(PREC_AMP_FP16), MX_FP16);
}

#define PROFILE_ERR_LEN 256

/* The profile file at path rewritten to hold text, then loaded into *g: its return (err:
 * gpu_profile_load's one-line reason, PROFILE_ERR_LEN bytes). */
static int load_text(const char *path, const char *text, struct gpu_profile *g, char *err)
{
	assert_int_equal(test_file_write(path, text), 0);
	return gpu_profile_load(path, g, err, PROFILE_ERR_LEN);
}

static void test_profiles(void **state)
{
	char path[64], err[PROFILE_ERR_LEN]; /* err: gpu_profile_load's one-line reason */
	struct gpu_profile g, back;
	FILE *tmp, *f;

	(void)state;
	assert_true(gpu_profile_count() >= 4);
	for (size_t i = 0; i < gpu_profile_count(); i++) {
		const struct gpu_profile *p = gpu_profile_at(i);

		assert_true(p->hbm_gbps > 0 && p->floor_us > 0 && p->launch_gap_us > 0);
		for (int m = 0; m < MX_COUNT; m++)
			assert_true(p->matrix_tflops[m] > 0 && p->conv_eff[m] > 0 &&
				    p->attn_eff[m] > 0);
		assert_non_null(strstr(p->source, i ? "datasheet" : "measured"));
		/* attention by tiles on every row: its SMs and the tiles' fixed times */
		assert_true(p->sm_count >= 100 && p->sm_count <= ATTN_MAX_SMS);
		assert_true(p->attn_tile_us[MX_BF16] > 0);
		/* the bias-epilogue tiles: measured for fp32 only, the small ones slower */
		assert_true(p->bias_gemm_share[MX_FP32] > 0 && p->bias_gemm_share[MX_FP32] < 1);
		for (int m = MX_TF32; m < MX_COUNT; m++)
			assert_true(p->bias_gemm_share[m] == 0);
		/* convolutions by shape in every precision measured (fp32, tf32, 16-bit); the
		 * small 3x3 and 1x1 kinds in fp32 alone (the tensor cores' precisions take the
		 * 3x3 / 1x1 entry) */
		for (int k = 0; k < CK_COUNT; k++) {
			bool small = k == CK_3S1_SMALL || k == CK_1S1_SMALL;

			assert_true(p->conv_shape[MX_FP32][CP_FWD].share[k] > 0);
			assert_true((p->conv_shape[MX_BF16][CP_WGRAD].share[k] > 0) == !small);
			assert_true((p->conv_shape[MX_TF32][CP_FWD].share[k] > 0) == !small);
		}
		/* few output pixels slow every pass but fp32's weight gradients (fit_conv.py) */
		for (int c = 0; c < CP_COUNT; c++) {
			assert_true((p->conv_shape[MX_FP32][c].pixels_half > 0) == (c != CP_WGRAD));
			assert_true(p->conv_shape[MX_TF32][c].pixels_half > 0);
			assert_true(p->conv_shape[MX_BF16][c].pixels_half > 0);
		}
	}
	assert_null(gpu_profile_find("h300"));
	assert_int_equal(gpu_profile_load("a100", &g, err, sizeof(err)), 0);
	/* round trip through the file format: an anonymous file (gone at fclose), opened by
	 * its /proc name as a user's profile is opened by its path */
	tmp = tmpfile();
	assert_non_null(tmp);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fileno(tmp));
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(gpu_profile_write(f, &g), 0);
	fclose(f);
	assert_int_equal(gpu_profile_load(path, &back, err, sizeof(err)), 0);
	assert_float_equal(back.hbm_gbps, g.hbm_gbps, 1e-9);
	assert_float_equal(back.matrix_tflops[MX_BF16], g.matrix_tflops[MX_BF16], 1e-9);
	assert_float_equal(back.mem_eff[OPC_BN][1], g.mem_eff[OPC_BN][1], 1e-9);
	assert_float_equal(back.conv_shape[MX_BF16][CP_WGRAD].pixels_half,
			   g.conv_shape[MX_BF16][CP_WGRAD].pixels_half, 1e-9);
	/* a file from before pixels_half: its convolution rows stop after gflop_half and
	 * read without the term (they were fitted without it); one number fewer still fails */
	assert_int_equal(
	    load_text(path, "conv_shape.bf16.fwd = 0.5 0.5 0.5 0.5 0.5 0 0 1 1 1 1 1 0 0 0.2\n",
		      &back, err),
	    0);
	assert_float_equal(back.conv_shape[MX_BF16][CP_FWD].gflop_half, 0.2, 1e-12);
	assert_true(back.conv_shape[MX_BF16][CP_FWD].pixels_half == 0);
	assert_true(back.conv_shape[MX_BF16][CP_DGRAD].pixels_half > 0); /* the h200 row's */
	assert_int_equal(load_text(path,
				   "conv_shape.bf16.fwd = 0.5 0.5 0.5 0.5 0.5 0 0 1 1 1 1 1 0 0\n",
				   &back, err),
			 -EINVAL);
	/* a file from before attention's tiles (attn_eff, no sm_count): its shares are of
	 * the whole GEMM rate, so no tiles; with sm_count it has them; a count no machine
	 * has fails naming its line */
	assert_int_equal(load_text(path, "attn_eff = 0.4 0.05 0.2 0.2\n", &back, err), 0);
	assert_true(back.sm_count == 0);
	assert_int_equal(
	    load_text(path, "attn_eff = 0.4 0.05 0.2 0.2\nsm_count = 108\n", &back, err), 0);
	assert_float_equal(back.sm_count, 108, 1e-12);
	assert_int_equal(load_text(path, "hbm_gbps = 100\nsm_count = 132.5\n", &back, err),
			 -EINVAL);
	assert_non_null(strstr(err, ":2: sm_count: expected a whole number 0..1024"));
	/* errors: unknown key, too few numbers, a negative one */
	assert_int_equal(load_text(path, "hbm_gbps = 100\nmatrix_tflop = 1 2 3 4\n", &back, err),
			 -EINVAL);
	/* one line naming the file, the line and the key */
	assert_non_null(strstr(err, ":2: unknown profile key 'matrix_tflop'"));
	assert_non_null(strstr(err, path));
	assert_null(strchr(err, '\n'));
	/* a key an earlier gradsync wrote and this one retired: refused, saying why */
	assert_int_equal(load_text(path, "bias_gemm_rows = 4096 0 0 0\n", &back, err), -EINVAL);
	assert_non_null(strstr(err, ":1: profile key 'bias_gemm_rows' is retired: "));
	assert_non_null(strstr(err, "waves"));
	assert_null(strchr(err, '\n'));
	assert_int_equal(load_text(path, "matrix_tflops = 1 2\n", &back, err), -EINVAL);
	assert_int_equal(load_text(path, "floor_us = -1\n", &back, err), -EINVAL);
	fclose(tmp);
	assert_int_equal(gpu_profile_load("/nonexistent/profile", &back, err, sizeof(err)),
			 -ENOENT);
	/* the built-in rows named from the table itself */
	assert_non_null(strstr(err, "not a built-in row (h200, h100, a100, b200)"));
	/* calibrated with the H200's own figures: the h200 row; twice the GEMM rate: twice
	 * every matrix rate, the rest as measured */
	gpu_profile_calibrated(&gpu_profile_h200_ours, "H200", &back);
	assert_memory_equal(back.matrix_tflops, gpu_profile_find("h200")->matrix_tflops,
			    sizeof(back.matrix_tflops));
	assert_memory_equal(back.mem_eff, gpu_profile_find("h200")->mem_eff, sizeof(back.mem_eff));
	assert_float_equal(back.hbm_gbps, gpu_profile_find("h200")->hbm_gbps, 1e-9);
	{
		struct profile_measure m = gpu_profile_h200_ours;

		/* twice the GEMM, half the streaming, a BatchNorm-like kernel at half the share
		 * of streaming it had on the H200: matrix x2, hbm /2, batchnorm share /2 */
		m.gemm_tflops *= 2;
		m.stream_gbps /= 2;
		m.bn_gbps /= 4;
		m.softmax_gbps = 0; /* not measured: the h200's share */
		m.sm_count = 78;    /* attention's tiles on this GPU's SMs */
		gpu_profile_calibrated(&m, "X", &back);
	}
	assert_float_equal(back.sm_count, 78, 1e-12);
	assert_float_equal(back.matrix_tflops[MX_FP32],
			   2 * gpu_profile_find("h200")->matrix_tflops[MX_FP32], 1e-9);
	assert_float_equal(back.hbm_gbps, gpu_profile_find("h200")->hbm_gbps / 2, 1e-9);
	if (gpu_profile_h200_ours.bn_gbps > 0) {
		assert_float_equal(back.mem_eff[OPC_BN][0],
				   gpu_profile_find("h200")->mem_eff[OPC_BN][0] / 2, 1e-9);
		/* backward's own share moves with it */
		assert_float_equal(back.bn_bwd_share[0],
				   gpu_profile_find("h200")->bn_bwd_share[0] / 2, 1e-9);
	}
	assert_float_equal(back.mem_eff[OPC_SOFTMAX][1],
			   gpu_profile_find("h200")->mem_eff[OPC_SOFTMAX][1], 1e-9);
	assert_non_null(strstr(back.source, "calibrated on X"));
	{
		/* a host twice as slow: the four host values twice the h200's */
		const struct gpu_profile *h = gpu_profile_find("h200");
		struct gpu_profile s = *h;

		assert_int_equal(gpu_profile_set_host_pace(&s, h, 2 * h->host_pace_us), 0);
		assert_float_equal(s.launch_gap_us, 2 * h->launch_gap_us, 1e-9);
		assert_float_equal(s.launch_us, 2 * h->launch_us, 1e-9);
		assert_float_equal(s.sublaunch_us, 2 * h->sublaunch_us, 1e-9);
		assert_float_equal(s.bwd_start_us, 2 * h->bwd_start_us, 1e-9);
		assert_float_equal(s.host_pace_us, 2 * h->host_pace_us, 1e-9);
		assert_float_equal(s.floor_us, h->floor_us, 1e-12); /* the GPU's own */
		/* its source no longer claims the measured host alone; a second pace replaces it */
		assert_non_null(strstr(s.source, "; host at 13.84 us per tiny eager op"));
		assert_int_equal(gpu_profile_set_host_pace(&s, h, 10.9), 0);
		assert_null(strstr(s.source, "13.84"));
		assert_non_null(strstr(s.source, "; host at 10.9 us per tiny eager op"));
		assert_int_equal(strncmp(s.source, h->source, strlen(h->source)), 0);
		assert_int_equal(gpu_profile_set_host_pace(&s, h, 0), -EINVAL);
		s.host_pace_us = 0;
		assert_int_equal(gpu_profile_set_host_pace(&back, &s, 7), -EINVAL);
	}
}

/* Under autocast a linear layer readies its weight first; fp32 and bf16 its bias first;
 * GPT-2's Conv1D (addmm with the bias first) always bias first. */
static void test_amp_ready_order(void **state)
{
	static const struct {
		const char *model;
		int precision;
		const char *first, *second;
	} cases[] = {
		{ "vit_b_16", PREC_FP32, "heads.head.bias", "heads.head.weight" },
		{ "vit_b_16", PREC_AMP_BF16, "heads.head.weight", "heads.head.bias" },
		{ "vit_b_16", PREC_BF16, "heads.head.bias", "heads.head.weight" },
		{ "resnet50", PREC_AMP_BF16, "fc.weight", "fc.bias" },
		{ "bert_base", PREC_AMP_BF16, "cls.seq_relationship.weight",
		  "cls.seq_relationship.bias" },
		{ "gpt2", PREC_AMP_BF16, "transformer.ln_f.weight", "transformer.ln_f.bias" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct workload_opts w;
		struct tensor_list tl;

		memset(&w, 0, sizeof(w));
		snprintf(w.model, sizeof(w.model), "%s", cases[i].model);
		w.precision = cases[i].precision;
		assert_int_equal(model_build(&w, &tl), 0);
		assert_string_equal(tl.t[tl.ready[0]].name, cases[i].first);
		assert_string_equal(tl.t[tl.ready[1]].name, cases[i].second);
		/* every layer's operators are in one group, forward ones first */
		for (uint32_t l = 0; l < tl.nlayers; l++) {
			for (uint32_t k = 1; k < tl.layers[l].nops; k++)
				assert_true(tl.ops[tl.layers[l].op_first + k].bwd >=
					    tl.ops[tl.layers[l].op_first + k - 1].bwd);
		}
		tensor_list_free(&tl);
	}
}

/* DDP's logging fields from two iterations of two buckets (ns since iteration start). */
static void test_ddp_logging(void **state)
{
	struct ddp_iter it[2] = { { .fwd_end = 100, .bwd_end = 300, .end = 400 },
				  { .fwd_end = 120, .bwd_end = 320, .end = 380 } };
	struct ddp_bucket_times bt[4] = { { 150, 160, 250 }, { 300, 300, 400 },
					  { 170, 180, 260 }, { 320, 330, 380 } };
	struct ddp_result r = { .iterations = 2, .nbuckets = 2, .iter = it, .bucket = bt };
	struct ddp_logging lg;

	(void)state;
	ddp_logging_fields(&r, &lg);
	assert_float_equal(lg.avg_forward_compute_time, 110, 1e-9);
	assert_float_equal(lg.avg_backward_compute_time, 200, 1e-9);
	/* comm: 160..400 and 180..380 */
	assert_float_equal(lg.avg_backward_comm_time, (240 + 200) / 2.0, 1e-9);
	/* overlap: 160..300 and 180..320 */
	assert_float_equal(lg.avg_backward_compute_comm_overlap_time, 140, 1e-9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_op_times),
		cmocka_unit_test(test_attn_tiles),
		cmocka_unit_test(test_bias_gemm),
		cmocka_unit_test(test_conv_shape),
		cmocka_unit_test(test_op_classes),
		cmocka_unit_test(test_loss_and_casts),
		cmocka_unit_test(test_precision_names),
		cmocka_unit_test(test_profiles),
		cmocka_unit_test(test_amp_ready_order),
		cmocka_unit_test(test_ddp_logging),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
