/* launch_detect over every launcher's environment, the precedence rules and the errors. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "launch/launch.h"
#include "util/common.h"
#include "util/test_capture.h"
#include "util/test_tmpdir.h"

/* clang-format off */
/* Every variable any launcher reads: cleared before each case. */
static const char *const known_vars[] = {
	"GRADSYNC_RANK", "GRADSYNC_WORLD_SIZE", "GRADSYNC_LOCAL_RANK", "GRADSYNC_LOCAL_SIZE",
	"GRADSYNC_RENDEZVOUS", "GRADSYNC_TOKEN", "GRADSYNC_JOB_ID", "GRADSYNC_LISTEN_FD",
	"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NODEID", "SLURM_JOB_ID",
	"SLURM_STEP_ID", "SLURM_STEPID", "SLURM_TASKS_PER_NODE", "SLURM_STEP_TASKS_PER_NODE",
	"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST",
	"SLURM_LAUNCH_NODE_IPADDR", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
	"OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE", "OMPI_MCA_ess_base_jobid",
	"OMPI_MCA_orte_ess_jobid", "PMIX_RANK", "PMIX_SIZE", "PMIX_LOCAL_RANK",
	"PMIX_LOCAL_SIZE", "PMIX_NAMESPACE", "RANK", "WORLD_SIZE", "LOCAL_RANK",
	"LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RUN_ID",
	"PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS", "PMI_LOCAL_RANK",
	"PMI_LOCAL_SIZE", "PMI_FD",
};

struct detect_case {
	const char *name;
	const char *env[12];       /* "NAME=value" */
	struct launch_flags flags; /* rank -1 = none */
	const char *opt_rdv, *opt_token;
	int ret;
	/* expected on success */
	int rank, nranks, local_rank, local_nranks;
	const char *launcher, *job_id;
	const char *rdv;           /* exact, or "HOST:*" = host with the port derived from job id */
	const char *token_from;    /* the token expected, verbatim */
	bool spawned;
	int listen_fd;
	/* expected on error: a fragment of the one log line */
	const char *log;
};

/* Rows list fields positionally and stop early; the rest are zero by C rules. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define NOFLAGS {.rank = -1, .world_size = -1}

static const struct detect_case cases[] = {
	{"nothing", {NULL}, NOFLAGS, NULL, NULL, -ENOENT},
	{"gradsync spawner",
	 {"GRADSYNC_RANK=1", "GRADSYNC_WORLD_SIZE=4", "GRADSYNC_LOCAL_RANK=1",
	  "GRADSYNC_LOCAL_SIZE=4", "GRADSYNC_RENDEZVOUS=127.0.0.1:5000", "GRADSYNC_TOKEN=abc",
	  "GRADSYNC_JOB_ID=local-7", "GRADSYNC_LISTEN_FD=9"},
	 NOFLAGS, NULL, NULL, 0, 1, 4, 1, 4, "local", "local-7", "127.0.0.1:5000", "abc", true, 0},
	{"gradsync rank 0 inherits the listener",
	 {"GRADSYNC_RANK=0", "GRADSYNC_WORLD_SIZE=2", "GRADSYNC_RENDEZVOUS=127.0.0.1:5000",
	  "GRADSYNC_LISTEN_FD=9", "GRADSYNC_TOKEN=abc"},
	 NOFLAGS, NULL, NULL, 0, 0, 2, 0, 1, "local", "", "127.0.0.1:5000", "abc", true, 9},
	{"spawned ranks keep the spawner's rendezvous over flag and INI",
	 {"GRADSYNC_RANK=0", "GRADSYNC_WORLD_SIZE=2", "GRADSYNC_RENDEZVOUS=127.0.0.1:4000",
	  "GRADSYNC_TOKEN=sp"},
	 {.rank = -1, .world_size = -1, .rendezvous = "127.0.0.1:5000", .token = "flag"}, "h:6000",
	 "ini", 0, 0, 2, 0, 1, "local", "", "127.0.0.1:4000", "sp", true, 0},
	{"slurm",
	 {"SLURM_PROCID=5", "SLURM_NTASKS=8", "SLURM_LOCALID=1", "SLURM_NODEID=1",
	  "SLURM_TASKS_PER_NODE=4(x2)", "SLURM_JOB_ID=1234", "SLURM_STEP_ID=0",
	  "SLURM_JOB_NODELIST=gpu[03-04]", "GRADSYNC_TOKEN=k"},
	 NOFLAGS, NULL, NULL, 0, 5, 8, 1, 4, "slurm", "1234.0", "gpu03:*", "k"},
	{"slurm uneven nodes, launch node address",
	 {"SLURM_PROCID=4", "SLURM_NTASKS=5", "SLURM_LOCALID=0", "SLURM_NODEID=2",
	  "SLURM_TASKS_PER_NODE=2(x2),1", "SLURM_JOB_ID=99", "SLURM_STEPID=1",
	  "SLURM_LAUNCH_NODE_IPADDR=10.1.2.3", "GRADSYNC_TOKEN=k"},
	 NOFLAGS, NULL, NULL, 0, 4, 5, 0, 1, "slurm", "99", "10.1.2.3:*", "k"},
	{"slurm, GRADSYNC_RENDEZVOUS and GRADSYNC_TOKEN win",
	 {"SLURM_PROCID=0", "SLURM_NTASKS=2", "SLURM_LOCALID=0", "SLURM_JOB_ID=5",
	  "SLURM_STEP_ID=0", "SLURM_JOB_NODELIST=n1,n2", "GRADSYNC_RENDEZVOUS=10.0.0.9:7000",
	  "GRADSYNC_TOKEN=t"},
	 NOFLAGS, NULL, NULL, 0, 0, 2, 0, 1, "slurm", "5.0", "10.0.0.9:7000", "t"},
	{"openmpi, one host",
	 {"OMPI_COMM_WORLD_RANK=2", "OMPI_COMM_WORLD_SIZE=4", "OMPI_COMM_WORLD_LOCAL_RANK=2",
	  "OMPI_COMM_WORLD_LOCAL_SIZE=4", "OMPI_MCA_ess_base_jobid=777", "GRADSYNC_TOKEN=k"},
	 NOFLAGS, NULL, NULL, 0, 2, 4, 2, 4, "openmpi", "777", "127.0.0.1:*", "k"},
	{"pmi (MPICH/Intel MPI Hydra), one host, rendezvous given",
	 {"PMI_RANK=1", "PMI_SIZE=2", "MPI_LOCALRANKID=1", "MPI_LOCALNRANKS=2", "PMI_FD=5",
	  "GRADSYNC_RENDEZVOUS=127.0.0.1:7000", "GRADSYNC_TOKEN=k"},
	 NOFLAGS, NULL, NULL, 0, 1, 2, 1, 2, "pmi", "", "127.0.0.1:7000", "k"},
	{"pmi (Cray PALS) over two hosts",
	 {"PMI_RANK=5", "PMI_SIZE=8", "PMI_LOCAL_RANK=1", "PMI_LOCAL_SIZE=4", "GRADSYNC_TOKEN=k"},
	 NOFLAGS, "n1:7000", NULL, 0, 5, 8, 1, 4, "pmi", "", "n1:7000", "k"},
	{"pmi of one rank needs no rendezvous", {"PMI_RANK=0", "PMI_SIZE=1"},
	 NOFLAGS, NULL, NULL, 0, 0, 1, 0, 1, "pmi", "", "127.0.0.1:*", ""},
	{"pmix with PMIX_SIZE",
	 {"PMIX_RANK=3", "PMIX_SIZE=4", "PMIX_NAMESPACE=prte-1@1", "PMIX_LOCAL_RANK=3",
	  "PMIX_LOCAL_SIZE=4", "GRADSYNC_TOKEN=k"},
	 NOFLAGS, NULL, NULL, 0, 3, 4, 3, 4, "pmix", "prte-1@1", "127.0.0.1:*", "k"},
	{"pmix sized by GRADSYNC_WORLD_SIZE",
	 {"PMIX_RANK=1", "GRADSYNC_WORLD_SIZE=2", "PMIX_NAMESPACE=ns", "PMIX_LOCAL_SIZE=2"},
	 NOFLAGS, NULL, "ini", 0, 1, 2, 0, 2, "pmix", "ns", "127.0.0.1:*", "ini"},
	{"torchrun",
	 {"RANK=1", "WORLD_SIZE=2", "LOCAL_RANK=1", "LOCAL_WORLD_SIZE=2", "MASTER_ADDR=10.0.0.1",
	  "MASTER_PORT=29500", "TORCHELASTIC_RUN_ID=abc", "GRADSYNC_TOKEN=k"},
	 NOFLAGS, NULL, NULL, 0, 1, 2, 1, 2, "torchrun", "abc", "10.0.0.1:29501", "k"},
	{"one rank needs no token", {"RANK=0", "WORLD_SIZE=1", "TORCHELASTIC_RUN_ID=abc"},
	 NOFLAGS, NULL, NULL, 0, 0, 1, 0, 1, "torchrun", "abc", "127.0.0.1:*", ""},
	{"flag token beats INI and environment",
	 {"RANK=0", "WORLD_SIZE=2", "LOCAL_WORLD_SIZE=2", "GRADSYNC_TOKEN=env"},
	 {.rank = -1, .world_size = -1, .token = "flag"}, NULL, "ini", 0, 0, 2, 0, 2, "torchrun",
	 "", "127.0.0.1:*", "flag"},
	{"INI token beats the environment",
	 {"RANK=0", "WORLD_SIZE=2", "LOCAL_WORLD_SIZE=2", "GRADSYNC_TOKEN=env"},
	 NOFLAGS, NULL, "ini", 0, 0, 2, 0, 2, "torchrun", "", "127.0.0.1:*", "ini"},
	{"GRADSYNC_TOKEN", {"RANK=0", "WORLD_SIZE=2", "LOCAL_WORLD_SIZE=2", "GRADSYNC_TOKEN=env"},
	 NOFLAGS, NULL, NULL, 0, 0, 2, 0, 2, "torchrun", "", "127.0.0.1:*", "env"},
	{"flags beat the environment",
	 {"SLURM_PROCID=0", "SLURM_NTASKS=2", "SLURM_JOB_ID=5"},
	 {.rank = 2, .world_size = 4, .rendezvous = "10.0.0.1:9000", .token = "tok"},
	 NULL, NULL, 0, 2, 4, 0, 1, "flags", "", "10.0.0.1:9000", "tok"},
	{"rendezvous and token flags refine a launcher",
	 {"RANK=0", "WORLD_SIZE=2", "MASTER_ADDR=h", "MASTER_PORT=100"},
	 {.rank = -1, .world_size = -1, .rendezvous = "h2:5", .token = "x"},
	 NULL, NULL, 0, 0, 2, 0, 1, "torchrun", "", "h2:5", "x"},
	{"INI rendezvous and token",
	 {"OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=8", "OMPI_COMM_WORLD_LOCAL_SIZE=4"},
	 NOFLAGS, "head:4000", "ini", 0, 0, 8, 0, 4, "openmpi", "", "head:4000", "ini"},

	{"a job id is no token: slurm without one is refused",
	 {"SLURM_PROCID=0", "SLURM_NTASKS=2", "SLURM_JOB_ID=5", "SLURM_STEP_ID=0",
	  "SLURM_JOB_NODELIST=n1,n2"}, NOFLAGS, NULL,
	 NULL, -EINVAL, .log = "slurm launch of 2 ranks: no job token; put a secret in a file"},
	{"spawned ranks without the spawner's token are refused",
	 {"GRADSYNC_RANK=1", "GRADSYNC_WORLD_SIZE=2", "GRADSYNC_RENDEZVOUS=127.0.0.1:5000"},
	 NOFLAGS, NULL, NULL, -EINVAL, .log = "local launch of 2 ranks: no job token"},
	{"non-numeric rank", {"GRADSYNC_RANK=abc", "GRADSYNC_WORLD_SIZE=2"}, NOFLAGS, NULL, NULL,
	 -EINVAL, .log = "GRADSYNC_RANK=\"abc\""},
	{"negative rank", {"RANK=-1", "WORLD_SIZE=2"}, NOFLAGS, NULL, NULL, -EINVAL,
	 .log = "RANK=\"-1\""},
	{"sbatch script without srun",
	 {"SLURM_PROCID=0", "SLURM_NTASKS=4", "SLURM_JOB_ID=77", "SLURM_JOB_NODELIST=n[1-2]"},
	 NOFLAGS, NULL, NULL, -EINVAL,
	 .log = "inside Slurm job 77 (4 tasks) but not in a job step (an sbatch script or salloc shell): start the ranks with 'srun gradsync run FILE.ini'"},
	{"salloc shell of two tasks", {"SLURM_NTASKS=2", "SLURM_JOB_ID=78"}, NOFLAGS, NULL, NULL,
	 -EINVAL, .log = "inside Slurm job 78 (2 tasks) but not in a job step"},
	{"salloc shell of one task runs local ranks", {"SLURM_NTASKS=1", "SLURM_JOB_ID=79"},
	 NOFLAGS, NULL, NULL, -ENOENT},
	{"rank not below size", {"SLURM_PROCID=4", "SLURM_NTASKS=4"}, NOFLAGS, NULL, NULL,
	 -EINVAL, .log = "SLURM_PROCID=4: not below SLURM_NTASKS=4"},
	{"trailing blank", {"OMPI_COMM_WORLD_RANK=1 ", "OMPI_COMM_WORLD_SIZE=2"}, NOFLAGS, NULL,
	 NULL, -EINVAL, .log = "OMPI_COMM_WORLD_RANK=\"1 \""},
	{"hex is not decimal", {"RANK=0x1", "WORLD_SIZE=2"}, NOFLAGS, NULL, NULL, -EINVAL,
	 .log = "RANK=\"0x1\""},
	{"overflow", {"RANK=0", "WORLD_SIZE=99999999999"}, NOFLAGS, NULL, NULL, -EINVAL,
	 .log = "WORLD_SIZE=\"99999999999\""},
	{"zero size", {"GRADSYNC_RANK=0", "GRADSYNC_WORLD_SIZE=0"}, NOFLAGS, NULL, NULL, -EINVAL,
	 .log = "GRADSYNC_WORLD_SIZE=\"0\""},
	{"size without rank", {"OMPI_COMM_WORLD_SIZE=2"}, NOFLAGS, NULL, NULL, -EINVAL,
	 .log = "OMPI_COMM_WORLD_SIZE is set but OMPI_COMM_WORLD_RANK is not"},
	{"local rank not below local size",
	 {"RANK=0", "WORLD_SIZE=4", "LOCAL_RANK=2", "LOCAL_WORLD_SIZE=2"}, NOFLAGS, NULL, NULL,
	 -EINVAL, .log = "LOCAL_RANK=2: not below LOCAL_WORLD_SIZE=2"},
	{"bad master port", {"RANK=0", "WORLD_SIZE=1", "MASTER_ADDR=a", "MASTER_PORT=99999"},
	 NOFLAGS, NULL, NULL, -EINVAL, .log = "MASTER_PORT=\"99999\""},
	{"bad rendezvous", {"GRADSYNC_RANK=0", "GRADSYNC_WORLD_SIZE=1",
			    "GRADSYNC_RENDEZVOUS=hostonly"},
	 NOFLAGS, NULL, NULL, -EINVAL, .log = "GRADSYNC_RENDEZVOUS=\"hostonly\""},
	{"pmi on one host without a rendezvous",
	 {"PMI_RANK=0", "PMI_SIZE=2", "MPI_LOCALRANKID=0", "MPI_LOCALNRANKS=2",
	  "GRADSYNC_TOKEN=k"}, NOFLAGS, NULL, NULL, -EINVAL,
	 .log = "pmi launch of 2 ranks: the launcher names no job"},
	{"pmix without a size", {"PMIX_RANK=0", "PMIX_NAMESPACE=x"}, NOFLAGS, NULL, NULL,
	 -EINVAL, .log = "PMIX_RANK is set"},
	{"multi-host without rendezvous",
	 {"OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=8", "OMPI_COMM_WORLD_LOCAL_SIZE=4"},
	 NOFLAGS, NULL, NULL, -EINVAL, .log = "no rendezvous known"},
	{"--rank without --world-size", {NULL}, {.rank = 1, .world_size = -1}, NULL, NULL,
	 -EINVAL, .log = "--rank=1 --world-size=-1"},
	{"--rank beyond --world-size", {NULL}, {.rank = 2, .world_size = 2}, NULL, NULL, -EINVAL,
	 .log = "--rank=2 --world-size=2"},
	{"bad listen fd", {"GRADSYNC_RANK=0", "GRADSYNC_WORLD_SIZE=1", "GRADSYNC_LISTEN_FD=x"},
	 NOFLAGS, NULL, NULL, -EINVAL, .log = "GRADSYNC_LISTEN_FD=\"x\""},
};

/* clang-format on */

static void clear_env(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(known_vars); i++)
		unsetenv(known_vars[i]);
}

static void set_env(const char *const env[])
{
	for (size_t i = 0; i < 12 && env[i]; i++) {
		char name[64];
		const char *eq = strchr(env[i], '=');

		assert_non_null(eq);
		snprintf(name, sizeof(name), "%.*s", (int)(eq - env[i]), env[i]);
		assert_int_equal(setenv(name, eq + 1, 1), 0);
	}
}

/* Run launch_detect with stderr captured into log (the logged line of an error case). */
static int detect_capture(const struct launch_opts *o, const struct launch_flags *f,
			  struct launch_info *info, char *log, size_t len)
{
	struct capture c;
	int ret;

	capture_begin(&c);
	ret = launch_detect(o, f, info);
	capture_end(&c, log, len);
	return ret;
}

static void check_case(const struct detect_case *c)
{
	struct launch_opts o = {.local_ranks = 1, .timeout_ns = 1000000000ull};
	struct launch_info info;
	char log[2048], rdv[160];
	int ret;

	clear_env();
	set_env(c->env);
	snprintf(o.rendezvous, sizeof(o.rendezvous), "%s", c->opt_rdv ? c->opt_rdv : "");
	snprintf(o.token, sizeof(o.token), "%s", c->opt_token ? c->opt_token : "");
	ret = detect_capture(&o, &c->flags, &info, log, sizeof(log));
	print_message("case \"%s\": ret %d\n", c->name, ret);
	assert_int_equal(ret, c->ret);
	if (ret) {
		if (c->log) {
			if (!strstr(log, c->log))
				fail_msg("case \"%s\": log \"%s\" lacks \"%s\"", c->name, log,
					 c->log);
			/* One line: the error is reported once. */
			assert_int_equal(strchr(log, '\n') - log + 1, (long)strlen(log));
		}
		return;
	}
	assert_int_equal(info.rank, c->rank);
	assert_int_equal(info.nranks, c->nranks);
	assert_int_equal(info.local_rank, c->local_rank);
	assert_int_equal(info.local_nranks, c->local_nranks);
	assert_string_equal(info.launcher, c->launcher);
	assert_string_equal(info.job_id, c->job_id);
	assert_int_equal(info.spawned, c->spawned);
	assert_int_equal(info.listen_fd, c->listen_fd);
	assert_string_equal(info.token, c->token_from);
	if (c->rdv[strlen(c->rdv) - 1] == '*') {
		/* Port derived from the job id, the same on every rank, below ephemeral ports. */
		unsigned int port = 10000 + launch_job_hash(c->job_id) % 22000;

		snprintf(rdv, sizeof(rdv), "%.*s%u", (int)strlen(c->rdv) - 1, c->rdv, port);
		assert_string_equal(info.rendezvous, rdv);
	} else {
		assert_string_equal(info.rendezvous, c->rdv);
	}
}

static void test_detect_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		check_case(&cases[i]);
	clear_env();
}

static void test_job_hash_fnv1a(void **state)
{
	(void)state;
	/* Published FNV-1a 64-bit test vectors. */
	assert_true(launch_job_hash("") == 0xcbf29ce484222325ull);
	assert_true(launch_job_hash("a") == 0xaf63dc4c8601ec8cull);
	assert_true(launch_job_hash("foobar") == 0x85944171f73967e8ull);
	assert_true(launch_job_hash("1234.0") != launch_job_hash("1234.1"));
}

/* Resolve [launch] token_file = path with everything else unset; the log in log. */
static int token_file_capture(const char *path, char *tok, size_t len, char *log, size_t loglen)
{
	struct launch_opts o = {0};
	const char *from = NULL;
	struct capture c;
	int ret;

	snprintf(o.token_file, sizeof(o.token_file), "%s", path);
	capture_begin(&c);
	ret = launch_token_resolve(&o, NULL, tok, len, &from);
	capture_end(&c, log, loglen);
	if (ret == 1)
		assert_string_equal(from, "[launch] token_file");
	return ret;
}

static void test_token_file(void **state)
{
	char dir[PATH_MAX], path[PATH_MAX + 8], tok[LAUNCH_TOKEN_MAX + 1], log[PATH_MAX + 200];
	FILE *f;

	(void)state;
	clear_env();
	assert_int_equal(test_tmpdir_make(dir, sizeof(dir), "token"), 0);
	snprintf(path, sizeof(path), "%s/t", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("s3cret-value\n", f);
	fclose(f);
	/* 0644: refused, naming the file and the fix */
	chmod(path, 0644);
	assert_int_equal(token_file_capture(path, tok, sizeof(tok), log, sizeof(log)), -EINVAL);
	assert_non_null(strstr(log, path));
	assert_non_null(strstr(log, "mode 0644 lets other users read the job token; chmod 600"));
	/* 0600: the content without its newline */
	chmod(path, 0600);
	assert_int_equal(token_file_capture(path, tok, sizeof(tok), log, sizeof(log)), 1);
	assert_string_equal(tok, "s3cret-value");
	/* 0400 is fine too; an empty file is not */
	chmod(path, 0400);
	assert_int_equal(token_file_capture(path, tok, sizeof(tok), log, sizeof(log)), 1);
	unlink(path);
	close(open(path, O_CREAT | O_WRONLY, 0600));
	assert_int_equal(token_file_capture(path, tok, sizeof(tok), log, sizeof(log)), -EINVAL);
	assert_non_null(strstr(log, "empty"));
	unlink(path);
	/* a FIFO or a directory is no token file, and must not hang */
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(token_file_capture(path, tok, sizeof(tok), log, sizeof(log)), -EINVAL);
	assert_non_null(strstr(log, "not a regular file"));
	unlink(path);
	assert_int_equal(token_file_capture(dir, tok, sizeof(tok), log, sizeof(log)), -EINVAL);
	assert_non_null(strstr(log, "not a regular file"));
	/* missing: errno named */
	assert_int_equal(token_file_capture(path, tok, sizeof(tok), log, sizeof(log)), -EINVAL);
	assert_non_null(strstr(log, "No such file"));
	assert_int_equal(test_tmpdir_remove(dir), 0);
}

static void test_random_token_and_argv(void **state)
{
	char a[LAUNCH_TOKEN_MAX + 1], b[LAUNCH_TOKEN_MAX + 1], saved[LAUNCH_TOKEN_MAX + 1];
	char a0[] = "run", a1[] = "x.ini", a2[] = "--token", a3[] = "hunter2", a4[] = "--case",
	     a5[] = "1";
	char *argv[] = {a0, a1, a2, a3, a4, a5, NULL};
	char **cv;

	(void)state;
	assert_int_equal(launch_token_random(a, sizeof(a)), 0);
	assert_int_equal(launch_token_random(b, sizeof(b)), 0);
	assert_int_equal(strlen(a), 64);
	assert_string_not_equal(a, b);
	/* --token leaves argv: its bytes are overwritten, copies see the redaction */
	assert_int_equal(launch_argv_scrub_token(6, argv, saved, sizeof(saved)), 0);
	assert_string_equal(saved, "hunter2");
	assert_string_equal(a3, "xxxxxxx");
	assert_string_equal(argv[3], LAUNCH_REDACTED);
	cv = launch_child_argv(6, argv);
	assert_non_null(cv);
	assert_string_equal(cv[0], "gradsync");
	assert_string_equal(cv[1], "run");
	assert_string_equal(cv[2], "x.ini");
	assert_string_equal(cv[3], "--case");
	assert_string_equal(cv[4], "1");
	assert_null(cv[5]);
	free(cv);
}

static void test_slurm_first_host(void **state)
{
	static const struct {
		const char *list, *host;
	} t[] = {
	    {"gpu[03-06,9],login1", "gpu03"},
	    {"a1,b2", "a1"},
	    {"node7", "node7"},
	    {"rack[1-2]-gpu,x", "rack1-gpu"},
	    {"n[007]", "n007"},
	    {"x[", NULL},
	    {"", NULL},
	    {"[1-2]", "1"},
	    {"a[b]", NULL},
	};
	char host[64];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		int ret = launch_slurm_first_host(t[i].list, host, sizeof(host));

		if (!t[i].host) {
			assert_int_equal(ret, -EINVAL);
			continue;
		}
		assert_int_equal(ret, 0);
		assert_string_equal(host, t[i].host);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_detect_table),
		cmocka_unit_test(test_job_hash_fnv1a),
		cmocka_unit_test(test_token_file),
		cmocka_unit_test(test_random_token_and_argv),
		cmocka_unit_test(test_slurm_first_host),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
