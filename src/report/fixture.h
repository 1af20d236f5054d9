/*
 * Deterministic synthetic report documents, built with the rjson writer from an
 * alpha-beta model of each transport: the golden tests' inputs (checked in under
 * tests/fixtures/reports/, regenerated with GS_REGEN=1) and a demo of the schema.
 */
#ifndef GS_REPORT_FIXTURE_H
#define GS_REPORT_FIXTURE_H

#include <jansson.h>

/* Names of the fixtures, NULL-terminated: "tcp_shm", "ib_node_a", "ib_node_b", "resnet_overlap". */
extern const char *const report_fixture_names[];

/* A new document for fixture `name`, NULL for an unknown name; "sweepN" (sweep300) is
 * N cases with long five-key names, every 12th with a workload bucket timeline. */
json_t *report_fixture(const char *name);

#endif
