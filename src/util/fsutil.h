/* Files and directories: atomic writes, mkdir -p, fresh result directories. */
#ifndef GS_UTIL_FSUTIL_H
#define GS_UTIL_FSUTIL_H

#include <stddef.h>

/* Write data to path through a temporary file and rename(): readers never see half a file. */
int fs_write_atomic(const char *path, const void *data, size_t len);
int fs_mkdir_p(const char *path);
/* Create PARENT/NAME-YYYYmmdd-HHMMSS (or -2, -3, ... if taken); never reuses one. */
int fs_make_unique_dir(const char *parent, const char *name, char *out, size_t len);

#endif
