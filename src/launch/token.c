/*
 * The job token: the secret every rank proves at the rendezvous (HMAC key, see
 * bootstrap.h). Where it comes from, in order: --token, [launch] token, [launch]
 * token_file, GRADSYNC_TOKEN; a local run without one draws a random token that
 * reaches its ranks through the environment only. No token is ever derived from
 * something a neighbour can see (a path, a job id): a guessable default does not exist.
 */
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launch/launch.h"
#include "util/fsbound.h"
#include "util/log.h"
#include "util/rand.h"

/* A token file is a few bytes of secret; anything bigger is the wrong file. */
#define TOKEN_FILE_MAX 4096

static const char *user_name(uid_t uid, char *buf, size_t len)
{
	struct passwd *pw = getpwuid(uid);

	if (pw && pw->pw_name)
		snprintf(buf, len, "%s", pw->pw_name);
	else
		snprintf(buf, len, "uid %u", (unsigned int)uid);
	return buf;
}

int launch_token_read_file(const char *path, char *out, size_t len)
{
	struct fsb_read r = { .path = path, .max = TOKEN_FILE_MAX, .nofollow = true };
	char who[64], why[PATH_MAX + 160];
	size_t got;
	int ret;

	/* token_file's ~/ is $HOME already (the key table expands path keys); a FIFO planted
	 * under that name must not hang us (fsb_read opens a regular file only), nor a home
	 * on a file system that stopped answering (the bound of a file an experiment names) */
	ret = fsb_read(&r, fsb_timeout_default_ns(), why, sizeof(why));
	if (ret == -EFBIG) {
		log_err(LOG_LAUNCH, "token_file %s: too long (expected 1 to %d bytes of secret)",
			path, LAUNCH_TOKEN_MAX);
		return ret;
	}
	if (ret) {
		log_err(LOG_LAUNCH, "token_file %s: %s", path, why);
		return ret;
	}
	ret = -EINVAL;
	if (r.st.st_uid != geteuid()) {
		log_err(LOG_LAUNCH, "token_file %s: owned by %s, not by you: not your secret", path,
			user_name(r.st.st_uid, who, sizeof(who)));
		goto out_free;
	}
	if (r.st.st_mode & 077) {
		log_err(LOG_LAUNCH,
			"token_file %s: mode %04o lets other users read the job token; chmod 600 %s",
			path, (unsigned int)(r.st.st_mode & 07777), path);
		goto out_free;
	}
	got = r.len;
	while (got && strchr(" \t\r\n", r.data[got - 1]))
		got--;
	if (!got || got >= len || got > LAUNCH_TOKEN_MAX) {
		log_err(LOG_LAUNCH, "token_file %s: %s (expected 1 to %d bytes of secret)", path,
			got ? "too long" : "empty", LAUNCH_TOKEN_MAX);
		goto out_free;
	}
	if (memchr(r.data, '\0', got)) {
		log_err(LOG_LAUNCH, "token_file %s: contains a NUL byte", path);
		goto out_free;
	}
	memcpy(out, r.data, got);
	out[got] = '\0';
	ret = 0;
out_free:
	memset(r.data, 0, r.len);
	free(r.data);
	return ret;
}

int launch_token_resolve(const struct launch_opts *o, const char *flag, char *out, size_t len,
			 const char **from)
{
	const char *env = getenv("GRADSYNC_TOKEN"), *tok = NULL;
	int ret;

	*from = NULL;
	if (flag && *flag) {
		tok = flag;
		*from = "--token";
	} else if (o && o->token[0]) {
		tok = o->token;
		*from = "[launch] token";
	} else if (o && o->token_file[0]) {
		ret = launch_token_read_file(o->token_file, out, len);
		if (ret)
			return -EINVAL;
		*from = "[launch] token_file";
		return 1;
	} else if (env && *env) {
		tok = env;
		*from = "GRADSYNC_TOKEN";
	}
	if (!tok)
		return 0;
	if (strlen(tok) >= len || strlen(tok) > LAUNCH_TOKEN_MAX) {
		log_err(LOG_LAUNCH, "%s: the job token is longer than %d bytes", *from,
			LAUNCH_TOKEN_MAX);
		return -EINVAL;
	}
	snprintf(out, len, "%s", tok);
	return 1;
}

int launch_token_random(char *out, size_t len)
{
	/* 256 bits: the token is the whole of the job's authentication */
	return rand_hex(out, len, 32);
}

int launch_argv_scrub_token(int argc, char **argv, char *saved, size_t len)
{
	int ret = 0;

	saved[0] = '\0';
	for (int i = 0; i + 1 < argc; i++) {
		if (strcmp(argv[i], "--token"))
			continue;
		if (strlen(argv[i + 1]) >= len || strlen(argv[i + 1]) > LAUNCH_TOKEN_MAX) {
			log_err(LOG_LAUNCH, "--token: longer than %d bytes", LAUNCH_TOKEN_MAX);
			ret = -E2BIG;
		} else {
			snprintf(saved, len, "%s", argv[i + 1]);
		}
		/* /proc/PID/cmdline shows this memory: overwrite the secret itself */
		memset(argv[i + 1], 'x', strlen(argv[i + 1]));
		argv[i + 1] = (char *)LAUNCH_REDACTED;
		i++;
	}
	return ret;
}

char **launch_child_argv(int argc, char **argv)
{
	char **cv = calloc((size_t)argc + 2, sizeof(*cv));
	int n = 0;

	if (!cv)
		return NULL;
	cv[n++] = "gradsync";
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--token") && i + 1 < argc) {
			i++;
			continue;
		}
		cv[n++] = argv[i];
	}
	return cv;
}
