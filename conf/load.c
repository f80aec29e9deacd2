/*
 * conf/load.c: conf_load: the command line, the config file (libinih), the
 * choice of network, and applying the winning value of every key (each
 * area's keys in conf/apply_areas.c).
 *
 * Every setting, from argv or from the file, is checked the moment it is
 * read (so an error names the exact argument or line, even in a section of
 * another network) and appended to one ordered list of settings. Resolving
 * a key then walks that list for the highest level that has it: command
 * line, then the active network's section, then the top of the file.
 * The built-in defaults and conf_release are conf/defaults.c's.
 */
#include "conf/internal.h"

#include <errno.h>
#include <ini.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Levels a setting can come from; a network section is LV_NET + its enum. */
enum { LV_CMD = 0, LV_TOP = 1, LV_NET = 2, LV__COUNT = LV_NET + PROTO_NET__COUNT };

struct setting {
	enum conf_key key;
	int level;
	bool clear;  /* negated list (or -noconf): drop what came before */
	char *value; /* xstrdup'd; NULL when clear */
};

struct conf_loader {
	struct setting *s;
	size_t n, cap;
	/* List entries per key and level since the last clear, to enforce CONF_MAX_LIST. */
	unsigned short count[CONF_K__COUNT][LV__COUNT];
	char *err;
	size_t errlen;
	int rc;
	/* File parsing state, for the inih reader and handler. */
	const char *path;
	const char *buf;
	size_t len, pos;
	int lineno;
	int err_line;             /* line of the first error found by reader or handler; 0: none */
	struct conf_list ignored; /* bitcoind options accepted but ignored, for the log */
};

int conf_fail(struct conf_loader *L, int rc, const char *fmt, ...)
{
	va_list ap;
	if (L->rc)
		return L->rc; /* the first error is the one reported */
	va_start(ap, fmt);
	if (L->errlen)
		vsnprintf(L->err, L->errlen, fmt, ap);
	va_end(ap);
	L->rc = rc;
	return rc;
}

/* Where a setting came from, for messages: an argument, or file:line: name=value. */
struct where {
	const char *arg;  /* the command-line argument as typed; NULL for the file */
	const char *name; /* file: the key as written */
	const char *value;
};

static int fail_at(struct conf_loader *L, const struct where *w, int rc, const char *why)
{
	if (w->arg)
		return conf_fail(L, rc, "command line: %s: %s", w->arg, why);
	return conf_fail(L, rc, "%s:%d: %s=%s: %s", L->path, L->lineno, w->name, w->value, why);
}

static int add_setting(struct conf_loader *L, enum conf_key key, int level, bool clear,
                       const char *v)
{
	if (L->n >= CONF_MAX_SETTINGS)
		return conf_fail(L, CONF_EVALUE, "%s: more than %d settings",
		                 L->path ? L->path : "command line", CONF_MAX_SETTINGS);
	if (L->n == L->cap) {
		size_t ncap = L->cap ? L->cap * 2 : 32;
		struct setting *ns = xreallocarray(L->s, ncap, sizeof(*ns));
		if (!ns)
			return conf_fail(L, CONF_ENOMEM, "out of memory reading the configuration");
		L->s = ns;
		L->cap = ncap;
	}
	char *copy = NULL;
	if (!clear && !(copy = xstrdup(v)))
		return conf_fail(L, CONF_ENOMEM, "out of memory reading the configuration");
	L->s[L->n++] = (struct setting){key, level, clear, copy};
	return 0;
}

/* A name that is no peerd key: bitcoind's (conf/core_opts.c's rule), or unknown. */
static int not_a_key(struct conf_loader *L, const char *name, size_t len, const char *v,
                     const struct where *w)
{
	char msg[320];
	int verdict = conf_core_opt_judge(name, len, v, msg, sizeof(msg));
	int rc = w->arg ? CONF_EUSAGE : CONF_EKEY;
	if (verdict == CONF_CORE_UNKNOWN)
		return fail_at(L, w, rc,
		               w->arg ? "unknown option (-help lists them)"
		                      : "unknown key (peerd -help lists them)");
	if (verdict == CONF_CORE_REFUSED)
		return fail_at(L, w, rc, msg);
	if (L->ignored.n >= CONF_MAX_LIST)
		return 0;
	char note[640];
	if (w->arg)
		snprintf(note, sizeof(note), "command line: %s: %s", w->arg, msg);
	else
		snprintf(note, sizeof(note), "%s:%d: %s=%s: %s", L->path, L->lineno, w->name,
		         w->value, msg);
	if (!(L->ignored.v[L->ignored.n] = xstrdup(note)))
		return conf_fail(L, CONF_ENOMEM, "out of memory reading the configuration");
	L->ignored.n++;
	return 0;
}

/*
 * One setting from either source: `name` (len bytes, maybe "no"-prefixed)
 * with value v (NULL: a bare command-line -key). Checks it and records it.
 */
static int take(struct conf_loader *L, int level, const char *name, size_t len, const char *v,
                const struct where *w)
{
	char why[160];
	bool negated = false;
	int k = conf_key_find(name, len);
	if (k < 0 && len > 2 && memcmp(name, "no", 2) == 0) {
		k = conf_key_find(name + 2, len - 2);
		negated = k >= 0;
	}
	if (k < 0)
		return not_a_key(L, name, len, v, w);

	const struct conf_keydef *d = &conf_keys[k];
	if ((d->flags & CONF_KF_CMDLINE) && level != LV_CMD)
		return fail_at(L, w, CONF_EKEY, "only valid on the command line");
	if ((d->flags & CONF_KF_TOP) && level >= LV_NET)
		return fail_at(L, w, CONF_EKEY,
		               "only valid at the top of the file or on the command line");

	if (negated) {
		if (d->flags & CONF_KF_NONEG)
			return fail_at(L, w, CONF_EVALUE, "cannot be negated");
		if (!v || !*v || strcmp(v, "1") == 0)
			v = "0";
		else if (strcmp(v, "0") == 0)
			v = "1"; /* -nokey=0: a double negative, as bitcoind reads it */
		else
			return fail_at(L, w, CONF_EVALUE, "not 0 or 1");
		if ((d->flags & CONF_KF_NEGCLR) && strcmp(v, "0") == 0)
			goto clear;
	} else if (!v) {
		/* -listen, -debug (= all), -blockfilterindex (= every type), -prune (= 1) */
		if (d->kind == CONF_KIND_BOOL || d->kind == CONF_KIND_DEBUG ||
		    k == CONF_K_BLOCKFILTERINDEX || k == CONF_K_PRUNE)
			v = "1";
		else
			return fail_at(L, w, CONF_EUSAGE, "missing value (use -key=value)");
	}

	if ((d->flags & CONF_KF_ZEROCLR) &&
	    (strcmp(v, "0") == 0 || (k == CONF_K_DEBUG && strcmp(v, "none") == 0)))
		goto clear;
	if (conf_check_value((enum conf_key)k, v, why, sizeof(why)))
		return fail_at(L, w, CONF_EVALUE, why);
	if (conf_key_is_list((enum conf_key)k)) {
		if (L->count[k][level] >= CONF_MAX_LIST) {
			snprintf(why, sizeof(why), "too many values (max %d)", CONF_MAX_LIST);
			return fail_at(L, w, CONF_EVALUE, why);
		}
		L->count[k][level]++;
	}
	return add_setting(L, (enum conf_key)k, level, false, v);

clear:
	L->count[k][level] = 0;
	return add_setting(L, (enum conf_key)k, level, true, NULL);
}

/* ---- command line ------------------------------------------------------ */

static int parse_cmdline(struct conf_loader *L, struct peerd_conf *c, int argc, char **argv,
                         unsigned flags, int *argi)
{
	int i;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (a[0] != '-' || a[1] == '\0') {
			if (flags & CONF_F_POSITIONAL)
				break;
			return conf_fail(
			    L, CONF_EUSAGE,
			    "command line: unexpected argument '%s' (options start with '-')", a);
		}
		if (strcmp(a, "--") == 0) {
			if (flags & CONF_F_POSITIONAL) {
				i++;
				break;
			}
			return conf_fail(L, CONF_EUSAGE, "command line: unexpected argument '--'");
		}
		const char *name = a + 1 + (a[1] == '-'); /* --key as -key, as bitcoind */
		const char *eq = strchr(name, '=');
		size_t len = eq ? (size_t)(eq - name) : strlen(name);
		struct where w = {a, NULL, NULL};

		if ((len == 1 && (name[0] == 'h' || name[0] == '?')) ||
		    (len == 4 && memcmp(name, "help", 4) == 0)) {
			c->help = true;
			return conf_fail(L, CONF_EHELP, "help requested");
		}
		if (len == 7 && memcmp(name, "version", 7) == 0) {
			c->version = true;
			return conf_fail(L, CONF_EHELP, "version requested");
		}
		if (take(L, LV_CMD, name, len, eq ? eq + 1 : NULL, &w))
			return L->rc;
	}
	if (argi)
		*argi = i;
	return 0;
}

/* ---- the config file ----------------------------------------------------- */

/*
 * inih's reader: hands over one line at a time, which is also how we know
 * the line number (this libinih is built without INI_HANDLER_LINENO). On
 * the way it does what bitcoind's parser does and inih does not: '#'
 * comments anywhere on a line, leading blanks ignored (so an indented line
 * is never taken as a continuation), and it rejects what inih would
 * silently mangle: over-long lines (inih splits them), NUL bytes, unknown
 * sections and junk after a section header.
 */
static char *conf_reader(char *str, int num, void *stream)
{
	struct conf_loader *L = stream;
	if (L->rc || L->pos >= L->len)
		return NULL;

	const char *line = L->buf + L->pos;
	const char *nl = memchr(line, '\n', L->len - L->pos);
	size_t n = nl ? (size_t)(nl - line) : L->len - L->pos;
	L->pos += n + (nl ? 1 : 0);
	L->lineno++;

	if (memchr(line, '\0', n)) {
		L->err_line = L->lineno;
		conf_fail(L, CONF_ESYNTAX, "%s:%d: NUL byte in the line", L->path, L->lineno);
		return NULL;
	}
	if (L->lineno == 1 && n >= 3 && memcmp(line, "\xEF\xBB\xBF", 3) == 0) {
		line += 3;
		n -= 3;
	}
	const char *hash = memchr(line, '#', n);
	if (hash)
		n = (size_t)(hash - line);
	while (n && (*line == ' ' || *line == '\t')) {
		line++;
		n--;
	}
	while (n && (line[n - 1] == ' ' || line[n - 1] == '\t' || line[n - 1] == '\r'))
		n--;

	if (n && line[0] == '[') {
		const char *close = memchr(line, ']', n);
		if (!close) {
			L->err_line = L->lineno;
			conf_fail(L, CONF_ESYNTAX, "%s:%d: %.*s: missing ']'", L->path, L->lineno,
			          (int)n, line);
			return NULL;
		}
		if (close != line + n - 1) {
			L->err_line = L->lineno;
			conf_fail(L, CONF_ESYNTAX, "%s:%d: %.*s: text after the section header",
			          L->path, L->lineno, (int)n, line);
			return NULL;
		}
		if (conf_section_net(line + 1, (size_t)(close - line - 1)) < 0) {
			L->err_line = L->lineno;
			conf_fail(
			    L, CONF_ESYNTAX,
			    "%s:%d: %.*s: unknown section (main, test, testnet4, signet, regtest)",
			    L->path, L->lineno, (int)n, line);
			return NULL;
		}
	}
	if (num < 3 || n > (size_t)num - 2) {
		L->err_line = L->lineno;
		conf_fail(L, CONF_ESYNTAX, "%s:%d: line too long (max %d characters)", L->path,
		          L->lineno, num > 2 ? num - 2 : 0);
		return NULL;
	}
	memcpy(str, line, n);
	str[n] = '\n';
	str[n + 1] = '\0';
	return str;
}

static int conf_handler(void *user, const char *section, const char *name, const char *value)
{
	struct conf_loader *L = user;
	int level = LV_TOP;
	struct where w = {NULL, name, value};

	if (L->rc)
		return 0;
	if (*section) {
		int net = conf_section_net(section, strlen(section));
		if (net < 0) /* the reader checked it; a name longer than inih keeps lands here */
			goto bad;
		level = LV_NET + net;
	}
	/* regtest.port=1 at the top means port=1 in [regtest], as bitcoind. */
	const char *dot = strchr(name, '.');
	if (dot && level == LV_TOP) {
		int net = conf_section_net(name, (size_t)(dot - name));
		if (net >= 0) {
			level = LV_NET + net;
			name = dot + 1;
		}
	}
	if (take(L, level, name, strlen(name), value, &w) == 0)
		return 1;
bad:
	if (!L->rc)
		fail_at(L, &w, CONF_ESYNTAX, "bad section");
	L->err_line = L->lineno;
	return 0;
}

/* The text of line `lineno` of the file, for a syntax error inih found. */
static void line_text(const struct conf_loader *L, int lineno, const char **p, int *n)
{
	const char *s = L->buf, *end = L->buf + L->len;
	for (int i = 1; i < lineno && s < end; i++) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		s = nl ? nl + 1 : end;
	}
	const char *nl = memchr(s, '\n', (size_t)(end - s));
	size_t len = nl ? (size_t)(nl - s) : (size_t)(end - s);
	while (len && (s[len - 1] == '\r' || s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	*p = s;
	*n = len > 80 ? 80 : (int)len;
}

/* Read and parse the file at path. A missing file is fine unless `required`. */
static int parse_file(struct conf_loader *L, const char *path, bool required, bool *found)
{
	struct stat st;
	char *buf = NULL;
	int rc = 0;
	FILE *f = fopen(path, "rb");

	*found = false;
	if (!f) {
		/* ENOTDIR: the datadir is not a directory; conf_check_datadir says so better. */
		if ((errno == ENOENT || errno == ENOTDIR) && !required)
			return 0;
		return conf_fail(L, CONF_EFILE, "%s: cannot read config file: %s", path,
		                 strerror(errno));
	}
	if (fstat(fileno(f), &st) != 0) {
		rc = conf_fail(L, CONF_EFILE, "%s: cannot read config file: %s", path,
		               strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = conf_fail(L, CONF_EFILE, "%s: cannot read config file: %s", path,
		               S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file");
		goto out;
	}
	if (st.st_size > CONF_MAX_FILE_SIZE) {
		rc = conf_fail(L, CONF_EFILE, "%s: config file larger than %d bytes", path,
		               CONF_MAX_FILE_SIZE);
		goto out;
	}
	buf = xmalloc((size_t)st.st_size + 1);
	if (!buf) {
		rc = conf_fail(L, CONF_ENOMEM, "out of memory reading %s", path);
		goto out;
	}
	size_t len = fread(buf, 1, (size_t)st.st_size + 1, f);
	if (ferror(f) || len > (size_t)st.st_size) {
		rc = conf_fail(L, CONF_EFILE, "%s: cannot read config file: %s", path,
		               ferror(f) ? strerror(errno) : "file grew while reading");
		goto out;
	}
	*found = true;
	L->path = path;
	L->buf = buf;
	L->len = len;
	L->pos = 0;
	L->lineno = 0;
	L->err_line = 0;

	int line = ini_parse_stream(conf_reader, L, conf_handler, L);
	if (line > 0 && (L->err_line == 0 || line < L->err_line)) {
		/* inih's own syntax error (a line with neither '=' nor ':') comes first. */
		const char *t;
		int tn;
		line_text(L, line, &t, &tn);
		L->rc = 0;
		rc = conf_fail(L, CONF_ESYNTAX, "%s:%d: %.*s: expected key=value", path, line, tn,
		               t);
	} else if (line < 0 && !L->rc) {
		rc = conf_fail(L, line == -2 ? CONF_ENOMEM : CONF_EFILE,
		               "%s: cannot parse config file", path);
	} else {
		rc = L->rc;
	}
out:
	L->buf = NULL;
	xfree(buf);
	fclose(f);
	return rc;
}

/* ---- resolving and applying ---------------------------------------------- */

/*
 * The winning settings of key at the first of levels[] that has any: *first
 * and *end bound them in L->s (for a list every entry counts from the last
 * clear on). Returns the level, or -1 when no level set the key.
 */
static int resolve(const struct conf_loader *L, enum conf_key key, const int *levels, int nlevels,
                   size_t *first, size_t *end)
{
	for (int i = 0; i < nlevels; i++) {
		bool any = false;
		size_t start = 0, last = 0;
		for (size_t j = 0; j < L->n; j++) {
			const struct setting *s = &L->s[j];
			if (s->key != key || s->level != levels[i])
				continue;
			if (!any || s->clear || !conf_key_is_list(key))
				start = j; /* scalars: the last setting wins */
			any = true;
			last = j + 1;
		}
		if (any) {
			*first = start;
			*end = last;
			return levels[i];
		}
	}
	return -1;
}

/* Whether key is set at any of the levels (cleared or negated too: Core's IsArgSet). */
bool conf_is_set(const struct conf_loader *L, enum conf_key key, const int *levels, int nl)
{
	size_t a, b;
	return resolve(L, key, levels, nl, &a, &b) >= 0;
}

/* The scalar value of key, or NULL (unset, or cleared). */
const char *conf_scalar(const struct conf_loader *L, enum conf_key key, const int *levels, int nl)
{
	size_t a, b;
	if (resolve(L, key, levels, nl, &a, &b) < 0)
		return NULL;
	return L->s[a].clear ? NULL : L->s[a].value;
}

/* A proxy is set: -proxy names one (not "", "0" or -noproxy), as Core 29's
 * parameter interaction asks before turning -listen and -discover off. */
bool conf_proxy_given(const struct conf_loader *L, const int *levels, int nl)
{
	const char *v = conf_scalar(L, CONF_K_PROXY, levels, nl);
	return v && *v && strcmp(v, "0") != 0;
}

unsigned long long conf_uint_or(const char *v, unsigned long long dflt)
{
	unsigned long long n;
	if (v && conf_parse_uint(v, 0, ~0ULL, &n) == 0)
		return n;
	return dflt;
}

int conf_fill_list(struct conf_loader *L, enum conf_key key, const int *levels, int nl,
                   struct conf_list *out, bool *set)
{
	size_t a, b;
	*set = resolve(L, key, levels, nl, &a, &b) >= 0;
	if (!*set)
		return 0;
	for (size_t j = a; j < b; j++) {
		const struct setting *s = &L->s[j];
		if (s->key != key || s->level != L->s[a].level || s->clear)
			continue;
		if (out->n >= CONF_MAX_LIST)
			return conf_fail(L, CONF_EVALUE, "%s: too many values",
			                 conf_keys[key].name);
		/* Ownership moves to the conf. */
		out->v[out->n++] = s->value;
		L->s[j].value = NULL;
	}
	return 0;
}

/*
 * test=: Core's words (init.cpp: regtest only; an unknown word is a
 * warning) plus peerd's addrmanloopback; Core's bip94 changes consensus
 * rules peerd does not have, so it is refused rather than ignored.
 */
static int apply_test(struct conf_loader *L, struct peerd_conf *c)
{
	if (c->test.n && c->params->net != PROTO_NET_REGTEST)
		return conf_fail(L, CONF_EVALUE, "-test=<option> can only be used with regtest");
	for (size_t i = 0; i < c->test.n; i++) {
		const char *w = c->test.v[i];
		if (strcmp(w, "addrman") == 0) {
			c->test_addrman = true;
		} else if (strcmp(w, "addrmanloopback") == 0) {
			c->test_addrmanloopback = true;
		} else if (strcmp(w, "bip94") == 0) {
			return conf_fail(L, CONF_EVALUE, "-test=bip94: not supported by peerd");
		} else if (L->ignored.n < CONF_MAX_LIST) {
			char note[160];
			snprintf(note, sizeof(note),
			         "Unrecognised option \"%s\" provided in -test=<option>.", w);
			if (!(L->ignored.v[L->ignored.n] = xstrdup(note)))
				return conf_fail(L, CONF_ENOMEM,
				                 "out of memory reading the configuration");
			L->ignored.n++;
		}
	}
	return 0;
}

static int dup_path(struct conf_loader *L, char **out, const char *a, const char *b)
{
	size_t n = strlen(a) + (b ? strlen(b) + 1 : 0) + 1;
	*out = xmalloc(n);
	if (!*out)
		return conf_fail(L, CONF_ENOMEM, "out of memory");
	if (b)
		snprintf(*out, n, "%s%s%s", a, a[0] && a[strlen(a) - 1] == '/' ? "" : "/", b);
	else
		memcpy(*out, a, n);
	return 0;
}

/* A path key as bitcoind's -debuglogfile and -pid: relative ones live in the netdir. */
static int netdir_path(struct conf_loader *L, char **out, const struct peerd_conf *c, const char *v)
{
	return v[0] == '/' ? dup_path(L, out, v, NULL) : dup_path(L, out, c->netdir, v);
}

/* debuglogfile=, pid=, controlsocketgroup= (issue 12's operator keys). */
static int operator_paths(struct conf_loader *L, struct peerd_conf *c, const int *lv, int nl);

/* Where data lives when neither -datadir nor datadir= says. */
static int default_datadir(struct conf_loader *L, char **out)
{
	const char *state = getenv("STATE_DIRECTORY");
	if (state && *state) {
		/* systemd passes a ':'-separated list when a unit has several. */
		size_t n = strcspn(state, ":");
		*out = xmalloc(n + 1);
		if (!*out)
			return conf_fail(L, CONF_ENOMEM, "out of memory");
		memcpy(*out, state, n);
		(*out)[n] = '\0';
		return 0;
	}
	const char *home = getenv("HOME");
	if (!home || !*home)
		return conf_fail(L, CONF_EVALUE,
		                 "cannot find the data directory: HOME is not set "
		                 "(use -datadir)");
	return dup_path(L, out, home, CONF_DATADIR_NAME);
}

/* Chain selection as bitcoind's: from the command line and the top of the file only. */
static int pick_chain(struct conf_loader *L, struct peerd_conf *c)
{
	static const int lv[] = {LV_CMD, LV_TOP};
	static const struct {
		enum conf_key key;
		enum proto_net net;
	} flags[] = {
	    {CONF_K_REGTEST, PROTO_NET_REGTEST},
	    {CONF_K_SIGNET, PROTO_NET_SIGNET},
	    {CONF_K_TESTNET, PROTO_NET_TESTNET3},
	    {CONF_K_TESTNET4, PROTO_NET_TESTNET4},
	};
	enum proto_net net = PROTO_NET_MAIN;
	int chosen = 0;
	const char *chain = conf_scalar(L, CONF_K_CHAIN, lv, 2);
	if (chain) {
		net = (enum proto_net)conf_section_net(chain, strlen(chain));
		chosen++;
	}
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		const char *v = conf_scalar(L, flags[i].key, lv, 2);
		if (v && strcmp(v, "1") == 0) {
			net = flags[i].net;
			chosen++;
		}
	}
	if (chosen > 1)
		return conf_fail(
		    L, CONF_EVALUE,
		    "Invalid combination of -regtest, -signet, -testnet, -testnet4 and -chain. "
		    "Can use at most one.");
	c->params = proto_params(net);
	if (!c->params)
		return conf_fail(L, CONF_EVALUE, "no parameters for network %d", (int)net);
	return 0;
}

static int apply(struct conf_loader *L, struct peerd_conf *c)
{
	int rc = pick_chain(L, c);
	if (rc)
		return rc;
	const int lv[] = {LV_CMD, LV_NET + (int)c->params->net, LV_TOP};
	const int nl = 3;
	const char *v;
	bool set, bind_set;

	if ((v = conf_scalar(L, CONF_K_DATADIR, lv, nl))) {
		if ((rc = dup_path(L, &c->datadir, v, NULL)))
			return rc;
		c->datadir_set = true;
	}
	if (!c->datadir && (rc = default_datadir(L, &c->datadir)))
		return rc;
	const char *sub = conf_net_subdir(c->params->net);
	if ((rc = dup_path(L, &c->netdir, c->datadir, *sub ? sub : NULL)))
		return rc;
	if ((v = conf_scalar(L, CONF_K_CONTROLSOCKET, lv, nl))) {
		if ((rc = dup_path(L, &c->controlsocket, v, NULL)))
			return rc;
	} else {
		if ((rc = dup_path(L, &c->controlsocket, c->netdir, CONF_SOCKET_FILENAME)))
			return rc;
		if (strlen(c->controlsocket) > CONF_MAX_SOCKET_PATH)
			return conf_fail(L, CONF_EVALUE,
			                 "controlsocket=%s (<datadir>/%s%s" CONF_SOCKET_FILENAME
			                 "): too long for a "
			                 "Unix socket (max %d bytes); set a shorter -controlsocket",
			                 c->controlsocket, sub, *sub ? "/" : "",
			                 CONF_MAX_SOCKET_PATH);
	}

	/* bitcoind's network-only keys: at the top of the file they are main's,
	 * so a test network needs its section (a top-level port= never moves
	 * a regtest node onto main's port). */
	const int nl_netonly = c->params->net == PROTO_NET_MAIN ? nl : nl - 1;
	if ((rc = conf_fill_list(L, CONF_K_BIND, lv, nl_netonly, &c->bind, &bind_set)) ||
	    (rc = conf_fill_list(L, CONF_K_CONNECT, lv, nl, &c->connect, &c->connect_set)) ||
	    (rc = conf_fill_list(L, CONF_K_ADDNODE, lv, nl, &c->addnode, &set)) ||
	    (rc = conf_fill_list(L, CONF_K_DEBUG, lv, nl, &c->debug, &set)))
		return rc;
	if ((rc = conf_apply_signet(L, c, lv, nl)))
		return rc;
	if ((rc = conf_fill_list(L, CONF_K_DEBUGEXCLUDE, lv, nl, &c->debugexclude, &set)) ||
	    (rc = conf_fill_list(L, CONF_K_TEST, lv, nl, &c->test, &set)) ||
	    (rc = apply_test(L, c)) ||
	    (rc = conf_fill_list(L, CONF_K_SEEDNODE, lv, nl, &c->seednode, &set)) ||
	    (rc = conf_fill_list(L, CONF_K_SIGNETSEEDNODE, lv, nl, &c->signetseednode, &set)) ||
	    (rc = conf_fill_list(L, CONF_K_VBPARAMS, lv, nl, &c->vbparams, &set)))
		return rc;
	c->checkaddrman = (int32_t)conf_uint_or(conf_scalar(L, CONF_K_CHECKADDRMAN, lv, nl), 0);
	if (c->checkaddrman > CONF_CLAMP_CHECKADDRMAN)
		c->checkaddrman = CONF_CLAMP_CHECKADDRMAN;
	c->mocktime = (int64_t)conf_uint_or(conf_scalar(L, CONF_K_MOCKTIME, lv, nl), 0);
	c->debug_mask = 0;
	c->debug_core = 0;
	/* Names were checked as they were read: apply cannot fail here. */
	for (size_t i = 0; i < c->debug.n; i++)
		(void)conf_debug_apply(c->debug.v[i], true, &c->debug_mask, &c->debug_core);
	/* Core: debugexclude wins over debug, even over debug=all. */
	for (size_t i = 0; i < c->debugexclude.n; i++)
		(void)conf_debug_apply(c->debugexclude.v[i], false, &c->debug_mask, &c->debug_core);
	if ((rc = operator_paths(L, c, lv, nl)))
		return rc;

	/* bitcoind: -bind implies -listen, -connect implies -nolisten; an explicit listen wins. */
	if ((v = conf_scalar(L, CONF_K_LISTEN, lv, nl)))
		c->listen = strcmp(v, "1") == 0;
	else if (c->bind.n)
		c->listen = true;
	else /* Core: a -proxy also means -listen=0 */
		c->listen = c->connect.n == 0 && !conf_proxy_given(L, lv, nl);
	if ((rc = conf_apply_networks(L, c, lv, nl)))
		return rc;

	c->port = (uint16_t)conf_uint_or(conf_scalar(L, CONF_K_PORT, lv, nl_netonly),
	                                 c->params->default_port);
	c->maxconnections = (int)conf_uint_or(conf_scalar(L, CONF_K_MAXCONNECTIONS, lv, nl),
	                                      CONF_DEFAULT_MAXCONNECTIONS);
	c->par = (int)conf_uint_or(conf_scalar(L, CONF_K_PAR, lv, nl), 0);
	c->dbcache_mib =
	    (size_t)conf_uint_or(conf_scalar(L, CONF_K_DBCACHE, lv, nl), CONF_DEFAULT_DBCACHE_MIB);
	c->maxreceivebuffer_kb = (size_t)conf_uint_or(
	    conf_scalar(L, CONF_K_MAXRECEIVEBUFFER, lv, nl), CONF_DEFAULT_MAXRECEIVEBUFFER_KB);
	c->maxsendbuffer_kb = (size_t)conf_uint_or(conf_scalar(L, CONF_K_MAXSENDBUFFER, lv, nl),
	                                           CONF_DEFAULT_MAXSENDBUFFER_KB);
	c->peertimeout_s = (int)conf_uint_or(conf_scalar(L, CONF_K_PEERTIMEOUT, lv, nl),
	                                     CONF_DEFAULT_PEERTIMEOUT_S);
	c->maxtipage_s = (int64_t)conf_uint_or(conf_scalar(L, CONF_K_MAXTIPAGE, lv, nl),
	                                       CONF_DEFAULT_MAXTIPAGE_S);
	c->minimumchainwork[0] = '\0';
	if ((v = conf_scalar(L, CONF_K_MINIMUMCHAINWORK, lv, nl)))
		snprintf(c->minimumchainwork, sizeof(c->minimumchainwork), "%s", v);
	c->assumevalid[0] = '\0';
	if ((v = conf_scalar(L, CONF_K_ASSUMEVALID, lv, nl)))
		snprintf(c->assumevalid, sizeof(c->assumevalid), "%s", v);
	c->binaryfreelist = (size_t)conf_uint_or(conf_scalar(L, CONF_K_BINARYFREELIST, lv, nl),
	                                         CONF_DEFAULT_BINARYFREELIST);
	c->scriptfreelist = (size_t)conf_uint_or(conf_scalar(L, CONF_K_SCRIPTFREELIST, lv, nl),
	                                         CONF_DEFAULT_SCRIPTFREELIST);
	c->rpcclienttimeout_s = (int)conf_uint_or(conf_scalar(L, CONF_K_RPCCLIENTTIMEOUT, lv, nl),
	                                          CONF_DEFAULT_RPCCLIENTTIMEOUT_S);
	c->maxrecvmemory_mib =
	    (size_t)conf_uint_or(conf_scalar(L, CONF_K_MAXRECVMEMORY, lv, nl), 0);
	c->controltimeout_s = (int)conf_uint_or(conf_scalar(L, CONF_K_CONTROLTIMEOUT, lv, nl),
	                                        CONF_DEFAULT_CONTROLTIMEOUT_S);
	c->logtimestamps = conf_uint_or(conf_scalar(L, CONF_K_LOGTIMESTAMPS, lv, nl), 1) != 0;
	c->printtoconsole = conf_uint_or(conf_scalar(L, CONF_K_PRINTTOCONSOLE, lv, nl), 1) != 0;
	c->metricsbind[0] = '\0';
	if ((v = conf_scalar(L, CONF_K_METRICSBIND, lv, nl)))
		snprintf(c->metricsbind, sizeof(c->metricsbind), "%s", v);
	/* Core's InitParameterInteraction: -connect (even -noconnect) or
	 * -maxconnections=0 soft-sets -dnsseed=0; then -forcednsseed needs it. */
	c->dnsseed = conf_uint_or(conf_scalar(L, CONF_K_DNSSEED, lv, nl),
	                          !c->connect_set && c->maxconnections > 0) != 0;
	c->fixedseeds = conf_uint_or(conf_scalar(L, CONF_K_FIXEDSEEDS, lv, nl), 1) != 0;
	c->forcednsseed = conf_uint_or(conf_scalar(L, CONF_K_FORCEDNSSEED, lv, nl), 0) != 0;
	if (c->forcednsseed && !c->dnsseed)
		return conf_fail(
		    L, CONF_EVALUE,
		    "Cannot set -forcednsseed to true when setting -dnsseed to false.");
	c->dnsserver[0] = '\0';
	if ((v = conf_scalar(L, CONF_K_DNSSERVER, lv, nl)))
		snprintf(c->dnsserver, sizeof(c->dnsserver), "%s", v);
	if ((rc = conf_apply_rpc(L, c, lv, nl, nl_netonly)) ||
	    (rc = conf_apply_notify(L, c, lv, nl)))
		return rc;
	return conf_apply_mempool(L, c, lv, nl);
}

/* ---- public -------------------------------------------------------------- */

int conf_load_args(struct peerd_conf *c, int argc, char **argv, unsigned flags, int *argi,
                   char *err, size_t errlen)
{
	struct conf_loader L = {.err = err, .errlen = errlen};
	char *datadir = NULL, *path = NULL;
	bool found = false;
	int rc;

	conf_defaults(c);
	if (err && errlen)
		err[0] = '\0';
	if (argi)
		*argi = argc;
	if ((rc = parse_cmdline(&L, c, argc, argv, flags, argi)))
		goto out;

	/* Which file: -conf (relative to the command line's datadir, as bitcoind), else
	 * datadir/peerd.conf; -noconf: none. The file cannot move itself. */
	static const int cmd[] = {LV_CMD};
	size_t a, b;
	bool explicit_conf = resolve(&L, CONF_K_CONF, cmd, 1, &a, &b) >= 0;
	const char *conf =
	    explicit_conf ? conf_scalar(&L, CONF_K_CONF, cmd, 1) : CONF_CONF_FILENAME;
	if (conf) {
		const char *dd = conf_scalar(&L, CONF_K_DATADIR, cmd, 1);
		if (conf[0] == '/')
			rc = dup_path(&L, &path, conf, NULL);
		else if (dd)
			rc = dup_path(&L, &path, dd, conf);
		else if (!(rc = default_datadir(&L, &datadir)))
			rc = dup_path(&L, &path, datadir, conf);
		if (rc || (rc = parse_file(&L, path, explicit_conf, &found)))
			goto out;
	}
	if ((rc = apply(&L, c)))
		goto out;
	if (found) {
		c->conf_file = path;
		path = NULL;
	}
	c->ignored = L.ignored;
	L.ignored.n = 0;
out:
	conf_list_release(&L.ignored);
	for (size_t i = 0; i < L.n; i++)
		xfree(L.s[i].value);
	xfree(L.s);
	xfree(datadir);
	xfree(path);
	if (rc)
		conf_release(c);
	return rc;
}

int conf_load(struct peerd_conf *c, int argc, char **argv, char *err, size_t errlen)
{
	return conf_load_args(c, argc, argv, 0, NULL, err, errlen);
}

static int operator_paths(struct conf_loader *L, struct peerd_conf *c, const int *lv, int nl)
{
	const char *v;
	int rc;
	if ((v = conf_scalar(L, CONF_K_DEBUGLOGFILE, lv, nl)) &&
	    (rc = netdir_path(L, &c->debuglogfile, c, v)))
		return rc;
	if ((v = conf_scalar(L, CONF_K_PID, lv, nl)) && (rc = netdir_path(L, &c->pidfile, c, v)))
		return rc;
	if ((v = conf_scalar(L, CONF_K_CONTROLSOCKETGROUP, lv, nl)) &&
	    (rc = dup_path(L, &c->controlsocketgroup, v, NULL)))
		return rc;
	return 0;
}
