/*
 * Peer for tests/bench/bench_peers.sh: MPI_Allreduce (float sum, in place) busbw over a
 * size sweep, timed like gradsync (back to back, per iteration the ranks' mean, averaged).
 *   mpi_allreduce [LO_BYTES [HI_BYTES [ITERS [FACTOR]]]]   (sizes LO, LO*FACTOR, .. HI)
 * Prints "size_bytes avg_us busbw_GBps" lines on rank 0.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	long lo = argc > 1 ? atol(argv[1]) : 1 << 20, hi = argc > 2 ? atol(argv[2]) : 256 << 20;
	int iters = argc > 3 ? atoi(argv[3]) : 10, factor = argc > 4 ? atoi(argv[4]) : 2;
	int warm = 3, rank, n;
	float *buf;
	double *dt, *total;
	long s;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	buf = malloc(hi);
	dt = calloc(warm + iters, sizeof(*dt));
	total = calloc(warm + iters, sizeof(*total));
	if (!buf || !dt || !total)
		MPI_Abort(MPI_COMM_WORLD, 1);
	memset(buf, 0, hi); /* touch every page before timing */
	if (factor < 2)
		factor = 2;
	for (s = lo; s <= hi; s *= factor) {
		long count = s / sizeof(float), i;
		double sum = 0;

		/* like gradsync: ranks meet once, then iterations back to back, each timed
		 * on every rank; per iteration the ranks' mean time counts */
		MPI_Barrier(MPI_COMM_WORLD);
		for (i = 0; i < warm + iters; i++) {
			double t0 = MPI_Wtime();

			MPI_Allreduce(MPI_IN_PLACE, buf, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
			dt[i] = MPI_Wtime() - t0;
		}
		MPI_Reduce(dt, total, warm + iters, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
		for (i = warm; i < warm + iters; i++)
			sum += total[i] / n;
		if (rank == 0) {
			double avg = sum / iters;

			printf("%ld %.1f %.3f\n", s, avg * 1e6, s / avg / 1e9 * 2.0 * (n - 1) / n);
			fflush(stdout);
		}
	}
	free(buf);
	free(dt);
	free(total);
	MPI_Finalize();
	return 0;
}
