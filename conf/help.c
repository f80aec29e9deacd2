/* conf/help.c: peerd -help, built from the key table, and the loader's error texts. */
#include "conf/internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct hbuf {
	char *p;
	size_t len, cap;
};

static void hb_printf(struct hbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void hb_printf(struct hbuf *b, const char *fmt, ...)
{
	va_list ap;
	if (b->len >= b->cap)
		return;
	va_start(ap, fmt);
	int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		b->len += (size_t)n < b->cap - b->len ? (size_t)n : b->cap - b->len - 1;
}

static void hb_indented(struct hbuf *b, const char *text)
{
	const char *p = text;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		hb_printf(b, "      %.*s\n", (int)n, p);
		p += n + (nl ? 1 : 0);
	}
}

const char *conf_help(void)
{
	/* Built once from the table so -help, parsing and defaults cannot drift apart. */
	static char text[32768];
	static bool built;
	if (built)
		return text;

	struct hbuf b = {text, 0, sizeof(text)};
	hb_printf(&b, "Usage: peerd [options]\n"
	              "\n"
	              "Options go on the command line as -key=value (-key alone means key=1,\n"
	              "-nokey means key=0 or an empty list) and in the config file as key=value\n"
	              "(nokey=1 negates; '#' starts a comment). A [main], [test], [testnet4],\n"
	              "[signet] or [regtest] section applies to that network only. The command\n"
	              "line overrides the file, a section overrides the top of the file, and a\n"
	              "repeatable key's list from a higher level replaces the lower one's.\n"
	              "An unknown key or a bad value is an error.\n\n");
	for (int k = 0; k < CONF_K__COUNT; k++) {
		const struct conf_keydef *d = &conf_keys[k];
		if (d->flags & CONF_KF_HIDDEN)
			continue;
		if (d->arg)
			hb_printf(&b, "  -%s=%s\n", d->name, d->arg);
		else
			hb_printf(&b, "  -%s\n", d->name);
		hb_indented(&b, d->help);
		if (k == CONF_K_PORT) {
			hb_printf(&b, "      Default: the network's:");
			for (int net = 0; net < PROTO_NET__COUNT; net++) {
				const struct proto_params *p = proto_params((enum proto_net)net);
				hb_printf(&b, "%s %s %u", net ? "," : "", p->name,
				          (unsigned)p->default_port);
			}
			hb_printf(&b, "\n");
		} else if (k == CONF_K_DEBUG) {
			hb_printf(&b, "      Categories: %s\n", conf_debug_names());
			hb_printf(&b, "      Default: %s\n", d->def);
		} else if (d->def && *d->def) {
			hb_printf(&b, "      Default: %s\n", d->def);
		}
		hb_printf(&b, "\n");
	}
	/* As peerctl's and peertool's help: an example and the exit status. */
	hb_printf(&b, "Example:\n"
	              "  peerd -regtest -datadir=/tmp/dd -bind=127.0.0.1 -debug=net\n"
	              "\n"
	              "Exit status: 0 after a clean shutdown (SIGTERM, SIGINT, the stop method)\n"
	              "and for -help and -version; 1 when startup fails (a bad option or config\n"
	              "value, the data directory locked by another peerd, a port in use), with\n"
	              "one line on stderr saying why.\n");
	built = true;
	return text;
}

const char *conf_strerror(int err)
{
	static const char *const text[] = {
	    [0] = "success",
	    [-CONF_EUSAGE] = "bad command line",
	    [-CONF_EFILE] = "config file unreadable",
	    [-CONF_ESYNTAX] = "config file syntax error",
	    [-CONF_EKEY] = "unknown key",
	    [-CONF_EVALUE] = "bad value",
	    [-CONF_ENOMEM] = "out of memory",
	    [-CONF_EHELP] = "help or version requested",
	};
	if (err > 0 || err < CONF_ERR__MIN)
		return "unknown error";
	return text[-err];
}
