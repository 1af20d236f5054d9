/*
 * Vocabularies the key table reads from lower layers (models, compute modes,
 * algorithms, ops, dtypes, reduction ops, transports, precisions, GDR levels and
 * modes) and the syntax checks of string-valued keys.
 */
#ifndef GS_CONFIG_VOCAB_H
#define GS_CONFIG_VOCAB_H

#include <stddef.h>
#include <stdbool.h>

struct cfg_choice;

bool vocab_model_at(size_t i, struct cfg_choice *out);
bool vocab_algo_at(size_t i, struct cfg_choice *out);
bool vocab_transport_at(size_t i, struct cfg_choice *out);
bool vocab_compute_at(size_t i, struct cfg_choice *out);
bool vocab_dtype_at(size_t i, struct cfg_choice *out);
bool vocab_redop_at(size_t i, struct cfg_choice *out);
bool vocab_op_at(size_t i, struct cfg_choice *out);
bool vocab_precision_at(size_t i, struct cfg_choice *out);
bool vocab_gdr_level_at(size_t i, struct cfg_choice *out);
bool vocab_gdr_mode_at(size_t i, struct cfg_choice *out);

int vocab_check_name(const char *value, char *err, size_t errlen);
int vocab_check_dir(const char *value, char *err, size_t errlen);
int vocab_check_rendezvous(const char *value, char *err, size_t errlen);
int vocab_check_ibdev(const char *value, char *err, size_t errlen);
int vocab_check_gpu_device(const char *value, char *err, size_t errlen);
int vocab_check_gpu_profile(const char *value, char *err, size_t errlen);
int vocab_check_threshold(const char *value, char *err, size_t errlen);
/* [workload] layers: parsed by the custom model's own builder, as `run` will. */
int vocab_check_layers(const char *value, char *err, size_t errlen);

#endif
