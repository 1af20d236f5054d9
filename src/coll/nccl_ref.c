/*
 * The NCCL reference: libnccl.so.2 through dlopen, with the few types and values of its
 * ABI we use declared here (no nccl.h at build time; values as in nccl.h since 2.10).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/nccl_ref.h"
#include "util/log.h"

#define NCCL_LIB_NAME	     "libnccl.so.2"
#define NCCL_UNIQUE_ID_BYTES 128

/* ncclUniqueId: an opaque 128-byte struct, passed by value to ncclCommInitRank. */
typedef struct {
	char internal[NCCL_UNIQUE_ID_BYTES];
} nccl_unique_id;

typedef struct nccl_comm *nccl_comm_t;

enum nccl_result { NCCL_SUCCESS = 0, NCCL_IN_PROGRESS = 7 };

/* ncclDataType_t and ncclRedOp_t values of the ones we need */
enum nccl_dtype { NCCL_FLOAT16 = 6, NCCL_FLOAT32 = 7, NCCL_FLOAT64 = 8, NCCL_BFLOAT16 = 9 };
enum nccl_redop { NCCL_SUM = 0, NCCL_AVG = 4 };

struct nccl_ref {
	void *lib;
	nccl_comm_t comm;
	int rank;
	char version[32];
	int (*get_version)(int *version);
	int (*get_unique_id)(nccl_unique_id *id);
	int (*comm_init_rank)(nccl_comm_t *comm, int nranks, nccl_unique_id id, int rank);
	int (*comm_destroy)(nccl_comm_t comm);
	int (*all_reduce)(const void *send, void *recv, size_t count, int dtype, int op,
			  nccl_comm_t comm, void *stream);
	const char *(*get_error_string)(int result);
};

static const int nccl_dtypes[DT_COUNT] = {[DT_F32] = NCCL_FLOAT32,
					  [DT_F16] = NCCL_FLOAT16,
					  [DT_BF16] = NCCL_BFLOAT16,
					  [DT_F64] = NCCL_FLOAT64};

static const char *nerr(const struct nccl_ref *n, int r)
{
	return n->get_error_string ? n->get_error_string(r) : "unknown NCCL error";
}

static int load_sym(struct nccl_ref *n, const char *name, void **fn)
{
	*fn = dlsym(n->lib, name);
	if (!*fn) {
		log_err(LOG_COLL, "nccl: %s has no symbol %s (NCCL too old?)", NCCL_LIB_NAME, name);
		return -ENOTSUP;
	}
	return 0;
}

static int nccl_load(struct nccl_ref *n)
{
	int v = 0, ret;

	n->lib = dlopen(NCCL_LIB_NAME, RTLD_NOW | RTLD_LOCAL);
	if (!n->lib) {
		log_err(LOG_COLL,
			"nccl: cannot load %s (%s): install NCCL or add its lib folder to "
			"LD_LIBRARY_PATH for transport = nccl",
			NCCL_LIB_NAME, dlerror());
		return -ENOENT;
	}
	ret = load_sym(n, "ncclGetVersion", (void **)&n->get_version);
	if (!ret)
		ret = load_sym(n, "ncclGetUniqueId", (void **)&n->get_unique_id);
	if (!ret)
		ret = load_sym(n, "ncclCommInitRank", (void **)&n->comm_init_rank);
	if (!ret)
		ret = load_sym(n, "ncclCommDestroy", (void **)&n->comm_destroy);
	if (!ret)
		ret = load_sym(n, "ncclAllReduce", (void **)&n->all_reduce);
	if (!ret)
		ret = load_sym(n, "ncclGetErrorString", (void **)&n->get_error_string);
	if (ret)
		return ret;
	n->get_version(&v);
	/* ncclAvg arrived in 2.10; the code is major*10000 + minor*100 + patch since 2.9 */
	if (v < 21000) {
		log_err(LOG_COLL, "nccl: %s is version code %d, need 2.10 or newer", NCCL_LIB_NAME,
			v);
		return -ENOTSUP;
	}
	snprintf(n->version, sizeof(n->version), "%d.%d.%d", v / 10000, v / 100 % 100, v % 100);
	return 0;
}

int nccl_ref_open(int rank, int nranks, int local_rank, nccl_ref_bcast_fn bcast, void *ctx,
		  struct nccl_ref **out)
{
	nccl_unique_id id;
	struct nccl_ref *n;
	int ret, r;

	if (rank < 0 || nranks < 1 || rank >= nranks || !bcast)
		return -EINVAL;
	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->rank = rank;
	ret = nccl_load(n);
	/* NVLink multicast can take a shared host's GPUs out of service: never use it */
	if (!ret && setenv("NCCL_NVLS_ENABLE", "0", 1)) {
		ret = -errno;
		log_err(LOG_COLL, "nccl: setenv NCCL_NVLS_ENABLE=0: %s", strerror(errno));
	}
	memset(&id, 0, sizeof(id));
	if (!ret && rank == 0) {
		r = n->get_unique_id(&id);
		if (r != NCCL_SUCCESS) {
			log_err(LOG_COLL, "ncclGetUniqueId: %s", nerr(n, r));
			ret = -EIO;
		}
	}
	/* every rank takes part in the broadcast, even after a local failure, so no rank
	 * waits for one that gave up; a failed rank 0 sends a zero id, which NCCL refuses */
	r = bcast(ctx, &id, sizeof(id));
	if (!ret && r)
		ret = r;
	if (ret)
		goto out_close;
	r = n->comm_init_rank(&n->comm, nranks, id, rank);
	if (r != NCCL_SUCCESS) {
		log_err(LOG_COLL,
			"ncclCommInitRank rank=%d nranks=%d local_rank=%d: %s (NCCL %s; it needs "
			"one GPU per rank)",
			rank, nranks, local_rank, nerr(n, r), n->version);
		n->comm = NULL;
		ret = -EIO;
		goto out_close;
	}
	log_info(LOG_COLL, "nccl: %s %s, rank %d of %d", NCCL_LIB_NAME, n->version, rank, nranks);
	*out = n;
	return 0;

out_close:
	nccl_ref_close(n);
	return ret;
}

int nccl_ref_allreduce(struct nccl_ref *n, void *devbuf, uint64_t count, enum dtype dt,
		       enum redop op, void *stream)
{
	int r;

	if (!n || !n->comm || (unsigned)dt >= DT_COUNT || (unsigned)op >= REDOP_COUNT) {
		log_err(LOG_COLL, "nccl allreduce dtype=%d op=%d: invalid", dt, op);
		return -EINVAL;
	}
	r = n->all_reduce(devbuf, devbuf, (size_t)count, nccl_dtypes[dt],
			  op == REDOP_AVG ? NCCL_AVG : NCCL_SUM, n->comm, stream);
	if (r != NCCL_SUCCESS) {
		log_err(LOG_COLL, "ncclAllReduce rank=%d count=%llu dtype=%s: %s", n->rank,
			(unsigned long long)count, dtype_name(dt), nerr(n, r));
		return -EIO;
	}
	return 0;
}

const char *nccl_ref_version(const struct nccl_ref *n)
{
	return n ? n->version : "";
}

void nccl_ref_close(struct nccl_ref *n)
{
	if (!n)
		return;
	if (n->comm) {
		int r = n->comm_destroy(n->comm);

		if (r != NCCL_SUCCESS)
			log_warn(LOG_COLL, "ncclCommDestroy rank=%d: %s", n->rank, nerr(n, r));
	}
	/* the library stays loaded: NCCL's exit hooks may still run from it */
	free(n);
}
