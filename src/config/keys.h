/*
 * The experiment language's vocabulary: one table row per INI key. The table drives
 * parsing, validation, `gradsync keys`, the README's key reference and the echo of
 * every resolved value into each report. Values are stored into `struct cfg`, which
 * aggregates the option structs each layer owns.
 */
#ifndef GS_CONFIG_KEYS_H
#define GS_CONFIG_KEYS_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>

#include "coll/coll.h"
#include "gpu/gpu.h"
#include "launch/launch.h"
#include "report/report.h"
#include "topo/numa.h"
#include "transport/transport.h"
#include "workload/workload.h"

/* [experiment] section. */
struct experiment_opts {
	char name[64];
	char output_dir[256];
	uint64_t seed;
	int repeat;
	char description[256];
};

/* One resolved case of an experiment: every section's options. Plain data, copyable. */
struct cfg {
	struct experiment_opts experiment;
	struct workload_opts workload;
	struct coll_opts collective;
	struct transport_opts transport;
	struct gpu_opts gpu;
	struct numa_opts numa;
	struct launch_opts launch;
	struct report_opts report;
};

enum cfg_type {
	CFG_INT,      /* integer, bounds min..max */
	CFG_FLOAT,    /* real number, bounds min..max */
	CFG_SIZE,     /* bytes with units: 4KiB, 25MiB, 1GB */
	CFG_DURATION, /* nanoseconds with units: 500us, 2ms, 10s */
	CFG_BOOL,     /* on/off, true/false, yes/no, 1/0 */
	CFG_ENUM,     /* one name of a vocabulary */
	CFG_STRING,   /* free text (checked by ->check when set) */
	CFG_SIZES,    /* list of sizes or geometric ranges: 4KiB..256MiB x2, 1MiB */
	CFG_INTS,     /* list of integers */
	CFG_LIST,     /* list of names of a vocabulary, stored comma-joined */
};

/* One allowed value of an enum key; value is what gets stored. */
struct cfg_choice {
	const char *name;
	int value;
	const char *help;
};

struct cfg_key {
	const char *section;
	const char *name;
	enum cfg_type type;
	const char *def;          /* default, parsed by the same code as user input */
	const char *unit;         /* shown in `gradsync keys`: "bytes", "ns", "ms" ... */
	double min, max;          /* numeric bounds, in the stored unit; min > max = unbounded */
	/* Vocabulary: static choices, or a lower layer's table read through a callback. */
	const struct cfg_choice *choices;
	size_t nchoices;
	bool (*choice_at)(size_t i, struct cfg_choice *out);
	/* Extra syntax check for strings: 0 or -EINVAL with err filled. */
	int (*check)(const char *value, char *err, size_t errlen);
	bool sweepable;           /* may appear in [matrix] */
	bool path;                /* CFG_STRING naming a file or directory: a leading ~/ is $HOME */
	bool secret;              /* CFG_STRING: shown as LAUNCH_REDACTED wherever it is echoed */
	/* Shapes the messages ranks exchange (sizes, counts, order, element type, transport
	 * handshake) or the expected results: a rank with another value than rank 0's
	 * cannot take part in the job. Per-host keys (interface, device, compute speed)
	 * may differ. */
	bool same_on_all_ranks;
	/* Transports that read the key (bits 1u << enum transport_kind; 0: every case does)
	 * and who they are in words ("ib/roce"): `check` warns when the key is set or swept
	 * and no case's transport reads it ([gpu] keys: nor with host buffers). */
	unsigned int read_by;
	const char *read_by_who;
	/* [collective] keys: the ops that read the key (bits 1u << enum coll_op; 0: every
	 * op), and whether a DDP workload takes it from [collective] (lint warns likewise) */
	unsigned int read_by_ops;
	bool ddp_reads;
	bool size_auto;           /* CFG_SIZE: "auto" is accepted and stored as 0;
				   * CFG_DURATION: stored as CFG_DURATION_AUTO */
	size_t offset;            /* where the value lives in struct cfg */
	size_t size;              /* bytes of that field (strings: capacity) */
	size_t count_offset;      /* lists: offset of the element count (int) */
	size_t set_offset;        /* non-zero: a bool in struct cfg set when a value is given */
	const char *help;
};

size_t cfg_key_count(void);
const struct cfg_key *cfg_key_at(size_t i);
/* Exact lookup of "section.name" or (bare) a name unique across sections. */
const struct cfg_key *cfg_key_find(const char *section, const char *name);
const struct cfg_key *cfg_key_find_dotted(const char *dotted);
bool cfg_section_known(const char *section);
/* Nearest known key of any section (edit distance), for "did you mean". */
const struct cfg_key *cfg_key_suggest(const char *section, const char *name);
const char *cfg_section_suggest(const char *section);

/* Number of choices of an enum/list key and the i-th one (static or from the callback). */
size_t cfg_key_nchoices(const struct cfg_key *k);
bool cfg_key_choice(const struct cfg_key *k, size_t i, struct cfg_choice *out);

/*
 * Parse value for key k and store it into c. On error returns -EINVAL/-ERANGE and
 * writes "what is wrong (expected ...)" into err.
 */
int cfg_value_set(struct cfg *c, const struct cfg_key *k, const char *value, char *err,
		  size_t errlen);
/* Canonical text of k's value in c (round-trips through cfg_value_set). */
/* The value as text, as parsing accepts it; a set secret key reads LAUNCH_REDACTED. */
void cfg_value_format(const struct cfg *c, const struct cfg_key *k, char *buf, size_t len);
/* A secret key holding a value: writers of INI text comment the line out (';'), so the
 * redaction never becomes a replayed run's token. */
bool cfg_value_redacted(const struct cfg *c, const struct cfg_key *k);
/* Fill c with every key's default; 0, or -EINVAL if a default fails to parse (a bug). */
int cfg_defaults(struct cfg *c, char *err, size_t errlen);

/* `gradsync keys` and the README reference, generated from the table. */
void cfg_keys_print(FILE *out, const char *section, bool markdown);

/* The value of an "auto" duration (a key whose size_auto is set). */
#define CFG_DURATION_AUTO UINT64_MAX

#endif
