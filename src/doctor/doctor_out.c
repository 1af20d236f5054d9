/* The doctor's report as terminal lines and as JSON (also embedded in every report.json). */
#include "doctor/doctor.h"

#include <string.h>

void doctor_print(FILE *f, const struct doc_report *r)
{
	static const char *const tag[DOC_LEVELS] = {"PASS", "SKIP", "WARN", "FAIL"};
	const char *last = "";

	for (int i = 0; i < r->n; i++) {
		const struct doc_finding *x = &r->f[i];

		if (strcmp(last, x->check))
			fprintf(f, "%s[%s]\n", i ? "\n" : "", x->check);
		last = x->check;
		fprintf(f, "  %s  %-18s %s\n", tag[x->level], x->subject, x->what);
		if (x->fix[0])
			fprintf(f, "        fix: %s\n", x->fix);
	}
	fprintf(f, "\n%s: %d pass, %d warn, %d fail, %d skipped\n",
		doctor_verdict(r) == DOC_FAIL	 ? "FAIL"
		: doctor_verdict(r) == DOC_WARN ? "WARN"
						: "PASS",
		r->count[DOC_PASS], r->count[DOC_WARN], r->count[DOC_FAIL], r->count[DOC_SKIP]);
}

json_t *doctor_json(const struct doc_report *r)
{
	json_t *arr = json_array(), *o;

	if (!arr)
		return NULL;
	for (int i = 0; i < r->n; i++) {
		const struct doc_finding *x = &r->f[i];

		if (json_array_append_new(arr, json_pack("{s:s, s:s, s:s, s:s, s:s}", "check",
							 x->check, "level",
							 doctor_level_name(x->level), "subject",
							 x->subject, "what", x->what, "fix", x->fix))) {
			json_decref(arr);
			return NULL;
		}
	}
	o = json_pack("{s:s, s:{s:i, s:i, s:i, s:i}, s:o}", "verdict",
		      doctor_level_name(doctor_verdict(r)), "counts", "pass", r->count[DOC_PASS],
		      "warn", r->count[DOC_WARN], "fail", r->count[DOC_FAIL], "skip",
		      r->count[DOC_SKIP], "findings", arr);
	return o;
}
