/*
 * A rank's stop signals (util/stopsig.h) around its bootstrap, for every verb that runs
 * ranks under a launcher (`gradsync run`, `gradsync rendezvous`): one handler, one
 * process-wide state, so a signalled rank behaves alike whichever verb it runs.
 */
#ifndef GS_RUN_STOP_H
#define GS_RUN_STOP_H

#include "launch/bootstrap.h"
#include "launch/launch.h"

/*
 * Before bootstrap_open, for a rank a launcher started (srun, mpirun, torchrun, flags:
 * they forward Ctrl-C to every rank); a rank gradsync spawned keeps the default action,
 * its spawner forwards the signal and reports. A stop signal then ends the open's wait
 * (rank 0's for the ranks, another rank's connection, any rank's name lookup) through
 * bo->stop, and the bootstrap says what it was doing, in one line.
 */
void run_stop_early(struct bootstrap_opts *bo);
/*
 * Once bootstrap_open succeeded: the first stop signal stops the job through the
 * bootstrap ("rank R stopped by SIGTERM", every rank told), one that came since
 * run_stop_early included; a second one kills at once (the default action).
 */
void run_stop_catch(struct bootstrap *bs);
/* Before bootstrap_close: the default actions again. */
void run_stop_release(void);
/* The first stop signal taken (its number), else 0. */
int run_stop_signo(void);

#endif
