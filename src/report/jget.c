/* Dotted-path access into jansson documents with defaults instead of NULL checks. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/jget.h"

json_t *jget(const json_t *o, const char *path)
{
	char key[128];
	const char *dot;
	json_t *cur = (json_t *)o;

	while (cur && json_is_object(cur)) {
		size_t n;

		dot = strchr(path, '.');
		if (!dot)
			return json_object_get(cur, path);
		n = (size_t)(dot - path);
		if (n >= sizeof(key))
			return NULL;
		memcpy(key, path, n);
		key[n] = '\0';
		cur = json_object_get(cur, key);
		path = dot + 1;
	}
	return NULL;
}

double jget_num(const json_t *o, const char *path)
{
	json_t *v = jget(o, path);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

const char *jget_str(const json_t *o, const char *path)
{
	json_t *v = jget(o, path);

	return json_is_string(v) ? json_string_value(v) : "";
}

const char *jget_text(const json_t *o, const char *path, char *buf, size_t len)
{
	return jtext(jget(o, path), buf, len);
}

const char *jtext(const json_t *v, char *buf, size_t len)
{
	if (json_is_string(v))
		snprintf(buf, len, "%s", json_string_value(v));
	else if (json_is_integer(v))
		snprintf(buf, len, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		snprintf(buf, len, "%.6g", json_real_value(v));
	else if (json_is_boolean(v))
		snprintf(buf, len, "%s", json_is_true(v) ? "true" : "false");
	else if (len)
		buf[0] = '\0';
	return buf;
}
