/* base/opt.c: the shared option parser (see base/opt.h for the syntax). */
#include "base/opt.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

bool base_opt_is_help(const char *arg)
{
	return !strcmp(arg, "-h") || !strcmp(arg, "-help") || !strcmp(arg, "--help");
}

int base_opt_usage_error(const struct base_opt_cmd *c, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: %s: ", c->prog, c->cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n%s\n(%s help %s for the options)\n", c->usage, c->prog, c->cmd);
	return BASE_OPT_USAGE;
}

int base_opt_uint(const struct base_opt_cmd *c, const char *name, const char *val, uint64_t lo,
                  uint64_t hi, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = isdigit((unsigned char)val[0]) ? strtoull(val, &end, 10) : 0;
	if (!isdigit((unsigned char)val[0]) || *end || errno || v < lo || v > hi)
		return base_opt_usage_error(c, "--%s wants %llu to %llu, not '%s'", name,
		                            (unsigned long long)lo, (unsigned long long)hi, val);
	*out = v;
	return 0;
}

/* The spec whose name is the n bytes at s, or NULL. */
static const struct base_opt_spec *find(const struct base_opt_cmd *c, const char *s, size_t n)
{
	for (size_t i = 0; i < c->n_opts; i++)
		if (strlen(c->opts[i].name) == n && !strncmp(c->opts[i].name, s, n))
			return &c->opts[i];
	return NULL;
}

/* "--a, --b or --c": the options a mistyped one might have meant. */
static void list_options(const struct base_opt_cmd *c, char *out, size_t cap)
{
	size_t k = 0;
	out[0] = 0;
	for (size_t i = 0; i < c->n_opts && k < cap; i++) {
		int w = snprintf(out + k, cap - k, "%s--%s",
		                 i == 0               ? ""
		                 : i + 1 == c->n_opts ? " or "
		                                      : ", ",
		                 c->opts[i].name);
		if (w < 0)
			break;
		k += (size_t)w;
	}
}

int base_opt_parse(const struct base_opt_cmd *c, int argc, char **argv, base_opt_set_fn set,
                   void *ctx, const char **pos, size_t max_pos, size_t *n_pos)
{
	bool options = true;
	*n_pos = 0;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (options && !strcmp(arg, "--")) {
			options = false;
			continue;
		}
		if (!options || arg[0] != '-' || arg[1] == 0) {
			if (*n_pos >= max_pos)
				return base_opt_usage_error(c, "unexpected argument '%s'", arg);
			pos[(*n_pos)++] = arg;
			continue;
		}
		if (base_opt_is_help(arg)) {
			c->help(stdout);
			return BASE_OPT_HELP;
		}
		const char *name = arg + (arg[1] == '-' ? 2 : 1);
		const char *eq = strchr(name, '=');
		size_t n = eq ? (size_t)(eq - name) : strlen(name);
		const struct base_opt_spec *o = find(c, name, n);
		if (!o) {
			char known[512];
			list_options(c, known, sizeof(known));
			if (c->n_opts == 0)
				return base_opt_usage_error(
				    c, "unknown option '%.*s' (%s takes none)",
				    (int)(n + (size_t)(name - arg)), arg, c->cmd);
			return base_opt_usage_error(c, "unknown option '%.*s' (known: %s)",
			                            (int)(n + (size_t)(name - arg)), arg, known);
		}
		const char *val = NULL;
		if (o->value) {
			if (eq)
				val = eq + 1;
			else if (i + 1 < argc)
				val = argv[++i];
			else
				return base_opt_usage_error(c, "--%s needs a value", o->name);
		} else if (eq) {
			return base_opt_usage_error(c, "--%s takes no value", o->name);
		}
		int rc = set(ctx, o->id, val);
		if (rc)
			return rc;
	}
	return 0;
}
