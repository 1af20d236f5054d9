/* Unit tests of the experiment language: the key table, values, files, errors, matrix. */
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/experiment.h"
#include "report/report.h"
#include "topo/numa.h"
#include "util/common.h"
#include "util/fsbound.h"
#include "util/test_tmpdir.h"
#include "workload/gpu_profile.h"

static char tmpdir[PATH_MAX]; /* test_tmpdir_make, in main */

static void write_file(const char *name, const char *text, size_t len)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	fclose(f);
}

/* Inputs of issue 16: a FIFO, a directory, an oversized file, sibling includes. */
static void write_special_files(void)
{
	char path[512], *big = malloc(1049600);

	snprintf(path, sizeof(path), "%s/fifo.ini", tmpdir);
	if (access(path, F_OK))
		assert_int_equal(mkfifo(path, 0600), 0);
	snprintf(path, sizeof(path), "%s/adir", tmpdir);
	if (access(path, F_OK))
		assert_int_equal(mkdir(path, 0700), 0);
	assert_non_null(big);
	memset(big, '\n', 1049600);
	write_file("big.ini", big, 1049600);
	free(big);
	write_file("sib_a.ini", "[workload]\n\niterations = 5\n", 27);
	write_file("sib_b.ini", "[workload]\n\n\niterations = 7\n", 28);
	write_file("sib_dup.ini", "[workload]\n\niterations = 7\niterations = 8\n", 41);
	write_file("seq4096.ini", "[workload]\nseq_len = 4096\n", 26);
}

static void write_base(void)
{
	static const char base[] = "[launch]\nlocal_ranks = 2\n[matrix]\ntransport = tcp, shm\n";

	write_file("base.ini", base, strlen(base));
}

static int load_text(const char *text, struct experiment *exp, char *err, size_t errlen)
{
	char path[512];

	write_file("t.ini", text, strlen(text));
	snprintf(path, sizeof(path), "%s/t.ini", tmpdir);
	return experiment_load(path, exp, err, errlen);
}

/* Every row: help present, default parses and lies in bounds, choices well formed. */
static void test_key_table(void **state)
{
	struct cfg c;
	char err[512];
	size_t i, j;

	assert_int_equal(cfg_defaults(&c, err, sizeof(err)), 0);
	/* parse.c keeps the line of every key a file sets */
	assert_true(cfg_key_count() <= EXP_MAX_SET);
	for (i = 0; i < cfg_key_count(); i++) {
		const struct cfg_key *k = cfg_key_at(i);
		char v[8192], e[512];
		struct cfg c2;

		assert_non_null(k->help);
		assert_true(strlen(k->help) > 5);
		assert_non_null(k->def);
		assert_true(k->size > 0);
		/* canonical form round-trips */
		cfg_value_format(&c, k, v, sizeof(v));
		c2 = c;
		if (*v || k->type != CFG_INTS) {
			if (cfg_value_set(&c2, k, v, e, sizeof(e)))
				fail_msg("%s.%s: canonical '%s' does not parse: %s", k->section, k->name,
					 v, e);
			assert_memory_equal((char *)&c + k->offset, (char *)&c2 + k->offset, k->size);
		}
		if (k->type == CFG_ENUM || k->type == CFG_LIST || k->type == CFG_BOOL)
			assert_true(cfg_key_nchoices(k) > 0);
		/* a transport-scoped key names its readers for lint's warning */
		if (k->read_by)
			assert_true(k->read_by_who && *k->read_by_who);
		/* compared between ranks (run/agree.c): never a per-host section */
		if (k->same_on_all_ranks)
			assert_true(!strcmp(k->section, "experiment") ||
				    !strcmp(k->section, "workload") ||
				    !strcmp(k->section, "collective") ||
				    !strcmp(k->section, "transport"));
		/* no key is defined twice */
		for (j = i + 1; j < cfg_key_count(); j++) {
			const struct cfg_key *o = cfg_key_at(j);

			assert_false(!strcmp(k->section, o->section) && !strcmp(k->name, o->name));
		}
	}
	/* what shapes the messages must agree; what names this host's devices need not */
	assert_true(cfg_key_find("collective", "sizes")->same_on_all_ranks);
	assert_true(cfg_key_find("transport", "streams")->same_on_all_ranks);
	assert_false(cfg_key_find("transport", "tcp_interface")->same_on_all_ranks);
	assert_false(cfg_key_find("experiment", "output_dir")->same_on_all_ranks);
	assert_false(cfg_key_find("workload", "gpu_tflops")->same_on_all_ranks);
	/* [gpu] profile is a string (a FILE too), so its help names the built-in profiles
	 * by hand: each row of the profile table must be among them */
	for (i = 0; i < gpu_profile_count(); i++) {
		const char *name = gpu_profile_at(i)->name;

		if (!strstr(cfg_key_find("gpu", "profile")->help, name))
			fail_msg("[gpu] profile's help does not name built-in profile %s", name);
	}
	/* [report] formats: json is the run's own; every other one report_write_set writes,
	 * and it writes no format the key does not offer */
	{
		const struct cfg_key *k = cfg_key_find("report", "formats");
		char names[128], *tok, *save = NULL;
		struct cfg_choice ch;

		for (i = 0; cfg_key_choice(k, i, &ch); i++)
			assert_true(!strcmp(ch.name, "json") || report_format_writable(ch.name));
		report_format_list(names, sizeof(names), ",");
		for (tok = strtok_r(names, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			for (j = 0; cfg_key_choice(k, j, &ch) && strcmp(ch.name, tok); j++)
				;
			if (j == cfg_key_nchoices(k))
				fail_msg("report writes format %s that [report] formats does not offer", tok);
		}
	}
	/* [numa] bind is a string too (node:N, cpus:LIST): its help opens with the values */
	{
		char binds[128];

		numa_bind_list(binds, sizeof(binds), " | ", " | ");
		assert_memory_equal(cfg_key_find("numa", "bind")->help, binds, strlen(binds));
	}
}

struct value_case {
	const char *key;
	const char *value;
	int ret;
	const char *canonical; /* or error substring */
};

static const struct value_case value_cases[] = {
	{ "workload.bucket_cap", "25MiB", 0, "25MiB" },
	{ "workload.bucket_cap", "26214400", 0, "25MiB" },
	{ "workload.bucket_cap", "1.5GiB", 0, "1536MiB" },
	{ "workload.bucket_cap", "1GB", 0, "1000000000B" },
	{ "workload.bucket_cap", "25 MiB", 0, "25MiB" },
	{ "workload.bucket_cap", "25Mb", -22, "bad size '25Mb'" },
	{ "workload.bucket_cap", "-1MiB", -22, "bad size" },
	{ "workload.bucket_cap", "512", -34, "out of range (expected 1KiB..16GiB)" },
	{ "launch.timeout", "1500us", 0, "1500us" },
	{ "launch.timeout", "500us", -34, "out of range (expected 1ms..24h)" },
	{ "launch.timeout", "2ms", 0, "2ms" },
	{ "launch.timeout", "90s", 0, "90s" },
	{ "launch.timeout", "120s", 0, "2m" },
	{ "launch.timeout", "10", -22, "bad duration '10'" },
	{ "launch.timeout", "2d", -22, "bad duration" },
	{ "launch.local_ranks", "8", 0, "8" },
	{ "launch.local_ranks", "0", -34, "out of range (expected 1..1024)" },
	{ "launch.local_ranks", "four", -22, "is not an integer (expected 1..1024)" },
	/* integer ranges whole, as `gradsync keys` prints them (they read 0..1e+06) */
	{ "collective.warmup", "9999999999", -34, "out of range (expected 0..1000000)" },
	{ "transport.gid_index", "x", -22, "is not an integer (expected auto, -1..255)" },
	{ "gpu.profile", "h300", -2, "not a built-in row (h200, h100, a100, b200)" },
	{ "transport.gid_index", "auto", 0, "auto" },
	{ "transport.gid_index", "3", 0, "3" },
	{ "transport.gid_index", "256", -34, "out of range" },
	{ "transport.transport", "roce", 0, "roce" },
	{ "transport.transport", "RoCE", 0, "roce" },
	{ "transport.transport", "rdma", -22, "expected one of: auto, tcp, shm, ib, roce" },
	{ "transport.mtu", "4096", 0, "4096" },
	{ "transport.mtu", "1500", -22, "unknown value '1500'" },
	{ "transport.device", "mlx5_0:1", 0, "mlx5_0:1" },
	{ "transport.device", "mlx5_0:x", -22, "expected auto, DEVICE or DEVICE:PORT" },
	{ "workload.overlap", "off", 0, "off" },
	{ "workload.overlap", "yes", 0, "on" },
	{ "workload.overlap", "maybe", -22, "expected one of: on, off" },
	{ "workload.gpu_tflops", "312.5", 0, "312.5" },
	{ "workload.gpu_tflops", "-1", -34, "out of range" },
	{ "workload.gpu_tflops", "0", 0, "0" }, /* calibrate */
	{ "collective.sizes", "4KiB..64KiB x2", 0, "4KiB,8KiB,16KiB,32KiB,64KiB" },
	{ "collective.sizes", "1MiB..3MiB +1MiB, 8", 0, "1MiB,2MiB,3MiB,8B" },
	{ "collective.sizes", "1MiB, 4KiB..16KiB x4", 0, "1MiB,4KiB,16KiB" },
	{ "collective.sizes", "4KiB..1KiB x2", -22, "empty range" },
	{ "collective.sizes", "4KiB..64KiB", -22, "needs a step" },
	{ "collective.sizes", "4KiB..64KiB x1", -22, "bad factor" },
	{ "collective.sizes", "", -22, "empty list" },
	{ "collective.sizes", "4KiB,,8KiB", -22, "empty element" },
	{ "collective.sizes", "4B..1GiB x1.01", -34, "too many sizes" },
	{ "numa.bind", "node:1", 0, "node:1" },
	{ "numa.bind", "cpus:0-3,8", 0, "cpus:0-3,8" },
	{ "numa.bind", "cpus:3-1", -22, "bad CPU list" },
	{ "numa.bind", "socket", -22, "unknown binding 'socket'" },
	{ "gpu.device", "0,1, 2", 0, "0,1, 2" },
	{ "gpu.device", "gpu0", -22, "bad GPU list" },
	{ "report.min_busbw", "20GB/s", 0, "20GB/s" },
	{ "report.min_busbw", "80%", 0, "80%" },
	{ "report.min_busbw", "180%", -22, "bad threshold" },
	{ "report.formats", "md, html", 0, "md,html" },
	{ "report.formats", "pdf", -22, "unknown value 'pdf'" },
	{ "report.project_ranks", "2, 4,16", 0, "2,4,16" },
	{ "experiment.name", "my run", -22, "bad name" },
	/* issue 16: integers are decimal (a leading zero is not octal), hex only with 0x */
	{ "experiment.seed", "010", 0, "10" },
	{ "experiment.seed", "0x10", 0, "16" },
	{ "experiment.seed", "08", 0, "8" },
	/* issue 16: check refuses the custom layers that run refuses, with run's words */
	{ "workload.layers", "a:-5", -22, "layers entry 1 'a:-5': expected name:params" },
	{ "workload.layers", "a:10, b", -22, "layers entry 2 'b'" },
	{ "workload.layers", "a:10, a:20", -22, "layer names must be unique" },
	{ "workload.layers", "a:10:1.5, b:2k", 0, "a:10:1.5, b:2k" },
};

static void test_values(void **state)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(value_cases); i++) {
		const struct value_case *vc = &value_cases[i];
		const struct cfg_key *k = cfg_key_find_dotted(vc->key);
		struct cfg c;
		char err[512] = "", out[8192];
		int ret;

		assert_non_null(k);
		assert_int_equal(cfg_defaults(&c, err, sizeof(err)), 0);
		ret = cfg_value_set(&c, k, vc->value, err, sizeof(err));
		if (ret != vc->ret)
			fail_msg("%s = '%s': ret %d, expected %d (%s)", vc->key, vc->value, ret, vc->ret,
				 err);
		if (ret == 0) {
			cfg_value_format(&c, k, out, sizeof(out));
			if (strcmp(out, vc->canonical))
				fail_msg("%s = '%s': canonical '%s', expected '%s'", vc->key, vc->value,
					 out, vc->canonical);
		} else if (!strstr(err, vc->canonical)) {
			fail_msg("%s = '%s': error '%s' lacks '%s'", vc->key, vc->value, err,
				 vc->canonical);
		}
	}
}

struct file_case {
	const char *text;
	const char *error; /* NULL = loads; else the exact "t.ini:LINE: ..." tail to find */
	size_t ncases;
};

static const struct file_case file_cases[] = {
	{ "[workload]\nbucket_cap = 10MiB\n", NULL, 1 },
	{ "; comment\n\n[workload]\nbucket_capp = 25MiB\n",
	  "t.ini:4: workload.bucket_capp: unknown key (did you mean 'bucket_cap'?)", 0 },
	{ "[workload]\nstreams = 2\n",
	  "t.ini:2: workload.streams: unknown key (did you mean 'streams' in [transport]?)", 0 },
	{ "[workloads]\nmodel = none\n", "t.ini:1: unknown section [workloads] (did you mean [workload]?)", 0 },
	{ "[zzz]\n", "t.ini:1: unknown section [zzz]", 0 },
	{ "[workload]\nbucket_cap = 25Mb\n",
	  "t.ini:2: workload.bucket_cap: bad size '25Mb' (expected e.g. 4096, 64KiB, 25MiB, 1GB)", 0 },
	{ "[launch]\nlocal_ranks = 5000\n",
	  "t.ini:2: launch.local_ranks: 5000 is out of range (expected 1..1024)", 0 },
	{ "[launch]\nlocal_ranks = 2\nlocal_ranks = 3\n",
	  "t.ini:3: launch.local_ranks: duplicate key (first set at line 2)", 0 },
	{ "model = none\n", "t.ini:1: model: key outside any section", 0 },
	{ "[workload]\nthis line has no equals\n", "t.ini:2: syntax error", 0 },
	{ "[matrix]\ntransport = tcp, shm, roce\n", NULL, 3 },
	{ "[matrix]\ntransport = tcp, shm\nlocal_ranks = 2, 4\n", NULL, 4 },
	{ "[matrix]\ntransport = tcp, shm\nlocal_ranks = 2, 4\nexclude = transport=shm,local_ranks=4\n",
	  NULL, 3 },
	{ "[matrix]\ntransport = tcp, shm\nexclude = transport=shm; transport=tcp\n",
	  "every case is excluded", 0 },
	{ "[matrix]\ntransport =\n", "t.ini:2: matrix.transport: empty list", 0 },
	{ "[matrix]\ntransport = tcp, ,shm\n", "t.ini:2: matrix.transport: empty value in list", 0 },
	{ "[matrix]\nsizes = 4KiB, 8KiB\n",
	  "t.ini:2: matrix.sizes: collective.sizes may not be swept (set it in [collective] instead)", 0 },
	/* a bare name of several sections: none sweepable says so, else names the one to write */
	{ "[matrix]\niterations = 1, 2\n",
	  "t.ini:2: matrix.iterations: 'iterations' may not be swept (workload.iterations, collective.iterations: set it in its section)", 0 },
	{ "[matrix]\ndevice = a, b\n",
	  "t.ini:2: matrix.device: ambiguous key 'device' (write it as transport.device; gpu.device may not be swept)", 0 },
	{ "[matrix]\ntransprt = tcp\n", "t.ini:2: matrix.transprt: unknown key 'transprt' (did you mean 'transport.transport'?)", 0 },
	{ "[matrix]\ntransport = tcp, carrier-pigeon\n",
	  "t.ini:2: matrix.transport: unknown value 'carrier-pigeon'", 0 },
	{ "[matrix]\ngpu.gdr_level = PIX, PHB, SYS\ntransport = tcp\n", NULL, 3 },
	/* no case matches the baseline: which term, or the exclude rule, is why */
	{ "[matrix]\ntransport = tcp, shm\nbaseline = transport=ib\n",
	  "t.ini:3: matrix.baseline: no case matches the baseline: transport=ib is not on its axis (tcp, shm)", 0 },
	{ "[matrix]\ntransport = tcp, shm\nbaseline = dtype=bf16\n",
	  "t.ini:3: matrix.baseline: no case matches the baseline: dtype is not swept, and every case has dtype=f32", 0 },
	{ "[matrix]\ntransport = tcp, shm\ndtype = f32, bf16\nexclude = transport=tcp,dtype=f32\nbaseline = transport=tcp,dtype=f32\n",
	  "t.ini:5: matrix.baseline: no case matches the baseline: the case it names is excluded", 0 },
	{ "[matrix]\ntransport = tcp, shm\nbaseline = transport\n", "is not key=value", 0 },
	{ "[matrix]\ntransport = tcp, shm\ntransport = ib\n", "t.ini:3: matrix.transport: duplicate key", 0 },
	{ "[transport]\ndevice = ${GS_TEST_UNSET_VAR}\n",
	  "t.ini:2: transport.device: environment variable GS_TEST_UNSET_VAR is not set", 0 },
	{ "[transport]\ndevice = ${GS_TEST_UNSET_VAR:-mlx5_1:1}\n", NULL, 1 },
	{ "[transport]\ndevice = ${GS_TEST_DEV}\n", NULL, 1 },
	{ "include = missing.ini\n", "t.ini:1: include: cannot read", 0 },
	{ "include = self.ini\n", "self.ini:1: include: include cycle", 0 },
	{ "include = base.ini\n[launch]\nlocal_ranks = 3\n", NULL, 2 },
	/* issue 16, finding 10: nothing is silently dropped */
	{ "[workload] junk\n", "t.ini:1: text after [workload] (a section header stands alone", 0 },
	{ "[workload] iterations = 3\n", "t.ini:1: text after [workload]", 0 },
	{ "[workload] ; a comment\niterations = 3\n", NULL, 1 },
	{ "[workload]\rmodel = none\riterations = 3\r",
	  "t.ini:1: carriage return without a line feed (CR-only line endings?", 0 },
	{ "[workload]\r\nmodel = none\r\niterations = 3\r\n", NULL, 1 },
	/* a model's refusal names the line that set the refused key, else the model's */
	{ "[workload]\nmodel = custom\n",
	  "t.ini:2: workload.model: model custom: layers is empty", 0 },
	{ "[workload]\nmodel = custom\nlayers = a:-5\n",
	  "t.ini:3: workload.layers: model custom: layers entry 1 'a:-5'", 0 },
	{ "[workload]\nmodel = bert_base\nseq_len = 4096\n",
	  "t.ini:3: workload.seq_len: model bert_base has 512 positions: seq_len 4096 is past them", 0 },
	{ "[workload]\nmodel = gpt2\nnum_heads = 7\n",
	  "t.ini:3: workload.num_heads: model gpt2: hidden_size 768 is not a multiple of num_heads 7", 0 },
	{ "[workload]\nhidden_size = 100\nmodel = bert_base\n",
	  "t.ini:2: workload.hidden_size: model bert_base: hidden_size 100 is not a multiple of num_heads 12", 0 },
	{ "[workload]\nmodel = vit_b_16\nimage_size = 230\n",
	  "t.ini:3: workload.image_size: model vit_b_16: image_size 230 is not a multiple of its patch size 16", 0 },
	{ "[workload]\nmodel = llama3_8b\nnum_kv_heads = 5\n",
	  "t.ini:3: workload.num_kv_heads: model llama3_8b: num_heads 32 is not a multiple of num_kv_heads 5", 0 },
	{ "[workload]\nmodel = gpt2\n[matrix]\nseq_len = 512, 2048\n",
	  "t.ini:4: workload.seq_len: model gpt2 has 1024 positions: seq_len 2048 is past them (case seq_len=2048)", 0 },
	{ "include = seq4096.ini\n[workload]\nmodel = bert_base\n",
	  "seq4096.ini:2: workload.seq_len: model bert_base has 512 positions", 0 },
	{ "[workload]\nmodel = custom\n[matrix]\nlayers = a:1, b:-1\n",
	  "t.ini:4: matrix.layers", 0 },
	/* finding 9: includes are regular files, refused before a byte is read */
	{ "include = /dev/zero\n", "t.ini:1: include: cannot read '/dev/zero': is a character device, not a regular file", 0 },
	{ "include = fifo.ini\n", "t.ini:1: include: cannot read '/tmp/", 0 },
	{ "include = adir\n", "adir': is a directory, not a regular file", 0 },
	{ "include = big.ini\n", "big.ini': is 1025KiB, larger than the 1MiB limit", 0 },
	/* finding 2: sibling includes, the later one overrides; a duplicate names its own file */
	{ "include = sib_a.ini\ninclude = sib_b.ini\n", NULL, 1 },
	{ "include = sib_a.ini\ninclude = sib_dup.ini\n",
	  "sib_dup.ini:4: workload.iterations: duplicate key (first set at line 3)", 0 },
};

static void test_files(void **state)
{
	size_t i;

	setenv("GS_TEST_DEV", "mlx5_2:1", 1);
	write_file("self.ini", "include = self.ini\n", 19);
	write_base();
	write_special_files();
	for (i = 0; i < ARRAY_SIZE(file_cases); i++) {
		const struct file_case *fc = &file_cases[i];
		struct experiment *exp = calloc(1, sizeof(*exp));
		char err[EXP_ERR_MAX] = "";
		int ret = load_text(fc->text, exp, err, sizeof(err));

		if (!fc->error) {
			if (ret)
				fail_msg("case %zu: unexpected error: %s", i, err);
			assert_int_equal(exp->ncases, fc->ncases);
		} else {
			if (!ret)
				fail_msg("case %zu: loaded, expected error '%s'", i, fc->error);
			if (!strstr(err, fc->error))
				fail_msg("case %zu: error '%s' lacks '%s'", i, err, fc->error);
			assert_null(strchr(err, '\n'));
		}
		experiment_free(exp);
		free(exp);
	}
}

/* Issue 16, finding 2: the duplicate tracker kept a pointer into a finished include's frame. */
static void test_sibling_includes(void **state)
{
	struct experiment *exp = calloc(1, sizeof(*exp));
	char err[EXP_ERR_MAX];

	write_special_files();
	assert_int_equal(load_text("include = sib_a.ini\ninclude = sib_b.ini\n", exp, err,
				   sizeof(err)),
			 0);
	assert_int_equal(exp->cases[0].cfg.workload.iterations, 7);
	/* where the value came from: the later sibling's line */
	const struct cfg_key *it = cfg_key_find("workload", "iterations");
	const char *file;
	int line;

	assert_int_equal(experiment_key_line(exp, it, &file, &line), 0);
	assert_non_null(strstr(file, "sib_b.ini"));
	assert_int_equal(line, 4);
	assert_int_equal(experiment_key_line(exp, cfg_key_find("workload", "batch"), &file,
					     &line),
			 -ENOENT);
	experiment_free(exp);
	/* the includer still overrides both */
	assert_int_equal(load_text("include = sib_a.ini\ninclude = sib_b.ini\n[workload]\n"
				   "iterations = 9\n",
				   exp, err, sizeof(err)),
			 0);
	assert_int_equal(exp->cases[0].cfg.workload.iterations, 9);
	assert_int_equal(experiment_key_line(exp, it, &file, &line), 0);
	assert_non_null(strstr(file, "t.ini"));
	assert_int_equal(line, 4);
	experiment_free(exp);
	free(exp);
}

/* Issue 16, finding 1: 600 list items overflowed names_parse's 512-byte buffer. */
static void test_long_list(void **state)
{
	const struct cfg_key *k = cfg_key_find_dotted("report.formats");
	size_t n = 600 * 6;
	char *v = malloc(n + 1), err[512] = "";
	struct cfg c;

	assert_non_null(k);
	assert_non_null(v);
	for (size_t i = 0; i < 600; i++)
		memcpy(v + i * 6, "table,", 6);
	v[n - 1] = '\0';
	assert_int_equal(cfg_defaults(&c, err, sizeof(err)), 0);
	assert_int_equal(cfg_value_set(&c, k, v, err, sizeof(err)), -ERANGE);
	assert_non_null(strstr(err, "value too long"));
	free(v);
}

static void test_matrix_names_and_override(void **state)
{
	struct experiment *exp = calloc(1, sizeof(*exp));
	char err[EXP_ERR_MAX];

	write_base();
	assert_int_equal(load_text("include = base.ini\n[launch]\nlocal_ranks = 3\n"
				   "[matrix]\ngpu.gdr_level = PIX, SYS\nbaseline = transport=shm,gdr_level=SYS\n",
				   exp, err, sizeof(err)),
			 0);
	assert_int_equal(exp->ncases, 4);
	assert_string_equal(exp->cases[0].name, "transport=tcp,gdr_level=PIX");
	assert_string_equal(exp->cases[3].name, "transport=shm,gdr_level=SYS");
	assert_int_equal(exp->baseline_case, 3);
	/* a baseline naming every axis is every case's */
	for (size_t i = 0; i < exp->ncases; i++)
		assert_int_equal(exp->cases[i].baseline, 3);
	assert_int_equal(exp->cases[1].cfg.gpu.gdr_level, GDR_SYS);
	assert_int_equal(exp->cases[2].cfg.transport.kind, TP_SHM);
	/* the including file overrides the included one */
	assert_int_equal(exp->cases[0].cfg.launch.local_ranks, 3);
	experiment_free(exp);
	free(exp);
}

/* A baseline naming some axes: each case against the case with the baseline's values there
 * and its own elsewhere; none where that case is excluded. */
static void test_matrix_baseline_per_case(void **state)
{
	struct experiment *exp = calloc(1, sizeof(*exp));
	char err[EXP_ERR_MAX];
	char rule[256];

	write_base();
	assert_int_equal(load_text("include = base.ini\n[matrix]\ngpu.gdr_level = PIX, SYS, PHB\n"
				   "baseline = transport=shm\nexclude = transport=shm,gdr_level=PIX\n",
				   exp, err, sizeof(err)),
			 0);
	assert_int_equal(exp->ncases, 5);
	assert_string_equal(exp->cases[0].name, "transport=tcp,gdr_level=PIX");
	assert_string_equal(exp->cases[3].name, "transport=shm,gdr_level=SYS");
	assert_int_equal(exp->cases[0].baseline, -1); /* shm,PIX is excluded */
	assert_int_equal(exp->cases[1].baseline, 3);
	assert_int_equal(exp->cases[2].baseline, 4);
	assert_int_equal(exp->cases[3].baseline, 3);
	assert_int_equal(exp->cases[4].baseline, 4);
	assert_int_equal(exp->baseline_case, 3); /* the first that matches */
	experiment_cond_format(&exp->baseline, rule, sizeof(rule));
	assert_string_equal(rule, "transport=shm");
	experiment_free(exp);
	free(exp);
}

/* repeat = 3: the case list three times in rounds, each repetition named; baseline in round 1 */
static void test_matrix_repeat(void **state)
{
	struct experiment *exp = calloc(1, sizeof(*exp));
	char err[EXP_ERR_MAX];

	write_base();
	assert_int_equal(load_text("include = base.ini\n[experiment]\nrepeat = 3\n"
				   "[matrix]\nbaseline = transport=shm\n", exp, err, sizeof(err)),
			 0);
	assert_int_equal(exp->ncases, 6);
	assert_string_equal(exp->cases[0].name, "transport=tcp,repeat=1");
	assert_string_equal(exp->cases[1].name, "transport=shm,repeat=1");
	assert_string_equal(exp->cases[2].name, "transport=tcp,repeat=2");
	assert_string_equal(exp->cases[5].name, "transport=shm,repeat=3");
	assert_int_equal(exp->cases[4].cfg.transport.kind, TP_TCP);
	assert_int_equal(exp->cases[5].cfg.transport.kind, TP_SHM);
	assert_int_equal(exp->baseline_case, 1);
	/* speed-ups within a round: its own baseline */
	assert_int_equal(exp->cases[2].baseline, 3);
	assert_int_equal(exp->cases[5].baseline, 5);
	experiment_free(exp);

	/* no matrix: the one case per round */
	assert_int_equal(load_text("[experiment]\nrepeat = 2\n", exp, err, sizeof(err)), 0);
	assert_int_equal(exp->ncases, 2);
	assert_string_equal(exp->cases[1].name, "repeat=2");
	experiment_free(exp);

	/* past the case limit: refused with the key, not cut */
	static const char big[] = "[experiment]\nrepeat = 1000\n[matrix]\n"
				  "collective.algorithm = ring, tree, rhd, rd, hierarchical\n";

	write_file("big.ini", big, strlen(big));
	assert_int_not_equal(load_text("include = big.ini\n", exp, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "big.ini:2: experiment.repeat: 5 cases x 1000 repetitions"));
	experiment_free(exp);
	free(exp);
}

static void test_bad_bytes(void **state)
{
	struct experiment *exp = calloc(1, sizeof(*exp));
	char err[EXP_ERR_MAX], path[512], big[6000];

	write_file("nul.ini", "[workload]\nmodel = no\0ne\n", 25);
	snprintf(path, sizeof(path), "%s/nul.ini", tmpdir);
	assert_int_not_equal(experiment_load(path, exp, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "nul.ini:2: NUL byte"));
	experiment_free(exp);

	memset(big, 'x', sizeof(big));
	memcpy(big, "[experiment]\ndescription = ", 27);
	big[sizeof(big) - 2] = '\n';
	big[sizeof(big) - 1] = '\0';
	assert_int_not_equal(load_text(big, exp, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "t.ini:2: line too long (more than 4000 characters)"));
	experiment_free(exp);

	/* lines up to the limit load: inih's own buffer used to cut them at 197 */
	memset(big, 'x', sizeof(big));
	memcpy(big, "[experiment]\n; ", 15);
	big[13 + 4000] = '\n';
	memcpy(big + 13 + 4001, "seed = 3\n", 10);
	assert_int_equal(load_text(big, exp, err, sizeof(err)), 0);
	assert_int_equal(exp->base.experiment.seed, 3);
	experiment_free(exp);

	snprintf(path, sizeof(path), "%s/absent.ini", tmpdir);
	assert_int_not_equal(experiment_load(path, exp, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "absent.ini: cannot read: No such file"));
	free(exp);
}

/*
 * An experiment on a file system that does not answer fails its load in one line naming
 * the file and the call, instead of hanging it. A call of this process is made to stick
 * first (a FIFO where a results file's temporary goes: its open waits for a reader), so
 * the load is refused at once rather than after the default bound; then the FIFO is
 * opened, the call returns, and loads work again.
 */
static void test_load_hung(void **state)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8], why[PATH_MAX + 200], want[PATH_MAX + 64];
	char err[EXP_ERR_MAX];
	struct fsb_write w = { .path = path, .data = "x", .len = 1 };
	struct experiment *exp = calloc(1, sizeof(*exp));
	int fd, i, ret = -1;

	(void)state;
	assert_non_null(exp);
	snprintf(path, sizeof(path), "%s/stuck.json", tmpdir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	assert_int_equal(mkfifo(tmp, 0600), 0);
	assert_int_equal(fsb_write(&w, 100000000ull, why, sizeof(why)), -ETIMEDOUT);
	assert_int_not_equal(load_text("[experiment]\nname = h\n", exp, err, sizeof(err)), 0);
	snprintf(want, sizeof(want), "t.ini: cannot read: not attempted: the open of %s has not returned for ",
		 tmp);
	assert_non_null(strstr(err, want));
	assert_non_null(strstr(err, "reachable?"));
	fd = open(tmp, O_RDONLY | O_NONBLOCK);
	assert_true(fd >= 0);
	for (i = 0; i < 500 && ret; i++) {
		usleep(10000);
		ret = load_text("[experiment]\nname = h\n", exp, err, sizeof(err));
		if (!ret)
			experiment_free(exp);
	}
	assert_int_equal(ret, 0);
	close(fd);
	unlink(tmp);
	free(exp);
}

static void test_conf_examples_parse(void **state)
{
	static const char *const confs[] = { "conf/quickstart.ini" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(confs); i++) {
		struct experiment *exp = calloc(1, sizeof(*exp));
		char err[EXP_ERR_MAX];

		if (experiment_load(confs[i], exp, err, sizeof(err)))
			fail_msg("%s", err);
		experiment_free(exp);
		free(exp);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key_table),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_matrix_names_and_override),
		cmocka_unit_test(test_matrix_baseline_per_case),
		cmocka_unit_test(test_matrix_repeat),
		cmocka_unit_test(test_sibling_includes),
		cmocka_unit_test(test_long_list),
		cmocka_unit_test(test_bad_bytes),
		cmocka_unit_test(test_conf_examples_parse),
		cmocka_unit_test(test_load_hung),
	};
	int ret;

	assert_int_equal(test_tmpdir_make(tmpdir, sizeof(tmpdir), "config"), 0);
	ret = cmocka_run_group_tests_name("config", tests, NULL, NULL);
	test_tmpdir_remove(tmpdir);
	return ret;
}
