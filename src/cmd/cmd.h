/*
 * The verbs of the command line. Each verb is one function taking the arguments
 * after the verb name (argv[0] is the verb) and returning an exit code (enum gs_exit).
 * Adding a verb is one row in main.c's table plus its file here.
 */
#ifndef GS_CMD_CMD_H
#define GS_CMD_CMD_H

int cmd_version(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_keys(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_topo(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_rendezvous(int argc, char **argv);
int cmd_gpu(int argc, char **argv);
int cmd_predict(int argc, char **argv);
int cmd_doctor(int argc, char **argv);

/* --gdr-level ARG of verb: 0 and *level set, or -EINVAL after one line naming the verb. */
int cmd_gdr_level_arg(const char *verb, const char *arg, int *level);

#endif
