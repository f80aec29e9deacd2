/*
 * daemon/notify/commands.c: Core 29's notification commands.
 *
 *   -blocknotify=CMD     the best block changed (%s: its hash); not during
 *                        initial block download, as Core (its
 *                        SynchronizationState::POST_INIT), nor for what
 *                        -reindex connects: chain_open does that before
 *                        the validation thread starts, and the view it
 *                        leaves is applied without the new-tip hook
 *   -startupnotify=CMD   once, when the node runs
 *   -shutdownnotify=CMD  each one, as shutdown begins (Core's Interrupt)
 *   -alertnotify=CMD     an alert (%s: the message, sanitised and in single
 *                        quotes, as Core's AlertNotify); ctl/warnings.c
 *                        raises Core's unknown-versionbits one
 *
 * Each runs as `/bin/sh -c CMD` (Core's runCommand calls system(), which
 * does the same), started with uv_spawn so the loop never waits for it;
 * its exit comes back as a callback that logs a non-zero status in Core's
 * words. stdout and stderr are peerd's; stdin is /dev/null. Loop thread.
 */
#include "daemon/notify/notify.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"

/* A running command: its handle and the text for the log. */
struct notify_child {
	uv_process_t proc;
	struct daemon *d;
	char cmd[];
};

static void on_closed(uv_handle_t *h)
{
	xfree(h->data);
}

static void on_exit_(uv_process_t *proc, int64_t status, int term_signal)
{
	struct notify_child *ch = proc->data;
	ch->d->notify->running--;
	/* What system() would have returned: the wait status. */
	int wstatus = (int)((status & 0xff) << 8) | (term_signal & 0x7f);
	if (wstatus)
		DLOG_ERR(&ch->d->log, DLOG_MAIN, "runCommand error: system(%s) returned %d",
		         ch->cmd, wstatus);
	uv_close((uv_handle_t *)proc, on_closed);
}

int notify_run(struct daemon *d, const char *cmd)
{
	struct notify_state *s = d->notify;
	if (s->running >= NOTIFY_MAX_COMMANDS) {
		DLOG_WARNING(&d->log, DLOG_MAIN,
		             "runCommand: %u commands still running, not starting %s", s->running,
		             cmd);
		return UV_EAGAIN;
	}
	size_t len = strlen(cmd) + 1;
	struct notify_child *ch = xcalloc(1, sizeof(*ch) + len);
	if (!ch)
		return UV_ENOMEM;
	ch->d = d;
	memcpy(ch->cmd, cmd, len);
	char *args[] = {"/bin/sh", "-c", ch->cmd, NULL};
	uv_stdio_container_t io[3] = {
	    {.flags = UV_IGNORE},
	    {.flags = UV_INHERIT_FD, .data.fd = 1},
	    {.flags = UV_INHERIT_FD, .data.fd = 2},
	};
	uv_process_options_t o = {
	    .exit_cb = on_exit_, .file = args[0], .args = args, .stdio_count = 3, .stdio = io};
	ch->proc.data = ch;
	int err = uv_spawn(d->loop, &ch->proc, &o);
	if (err) {
		DLOG_ERR(&d->log, DLOG_MAIN, "runCommand error: cannot start %s: %s", cmd,
		         uv_strerror(err));
		/* libuv asks for the handle to be closed even when the spawn failed. */
		uv_close((uv_handle_t *)&ch->proc, on_closed);
		return err;
	}
	s->running++;
	DLOG_DBG(&d->log, DLOG_MAIN, "runCommand: %s (pid %d)", cmd, ch->proc.pid);
	return 0;
}

/* Every %s of cmd replaced by arg; -ENOSPC when it does not fit. */
static int replace_all(const char *cmd, const char *arg, char *out, size_t outlen)
{
	size_t n = 0, alen = strlen(arg);
	for (const char *p = cmd; *p; p++) {
		if (p[0] == '%' && p[1] == 's') {
			if (n + alen >= outlen)
				return -ENOSPC;
			memcpy(out + n, arg, alen);
			n += alen;
			p++;
			continue;
		}
		if (n + 1 >= outlen)
			return -ENOSPC;
		out[n++] = *p;
	}
	if (n >= outlen)
		return -ENOSPC;
	out[n] = '\0';
	return 0;
}

void notify_startup(struct daemon *d)
{
	if (d->conf->startupnotify[0])
		(void)notify_run(d, d->conf->startupnotify);
}

void notify_shutdown(struct daemon *d)
{
	for (size_t i = 0; i < d->conf->shutdownnotify.n; i++)
		(void)notify_run(d, d->conf->shutdownnotify.v[i]);
}

void notify_block_tip(struct daemon *d, const struct chainview_update *u)
{
	/* Core runs it for a new tip only: not in IBD, not for a reorg that only went back. */
	if (!d->conf->blocknotify[0] || u->ibd || u->n == 0 || u->old_height < 0)
		return;
	/* One run per new block, oldest first: the loop's update may carry
	 * several blocks (generatetoaddress N is one job), each of which was a
	 * tip of its own, as in Core, where each mined block is its own
	 * activation. */
	for (uint32_t i = 0; i < u->n; i++) {
		char hex[65], cmd[sizeof(d->conf->blocknotify) * 4];
		proto_hash_to_hex(&u->recs[i].hash, hex);
		if (replace_all(d->conf->blocknotify, hex, cmd, sizeof(cmd))) {
			DLOG_ERR(&d->log, DLOG_MAIN,
			         "blocknotify: the command is too long with the hash");
			return;
		}
		(void)notify_run(d, cmd);
	}
}

/* Core's SAFE_CHARS_DEFAULT, which SanitizeString keeps. */
static bool safe_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr(" .,;-_/:?@()", c));
}

int notify_alert_command(const char *cmd, const char *message, char *out, size_t outlen)
{
	size_t len = strlen(message);
	char *q = xmalloc(len + 3);
	if (!q)
		return -ENOMEM;
	size_t n = 0;
	q[n++] = '\'';
	for (size_t i = 0; i < len; i++)
		if (safe_char(message[i]))
			q[n++] = message[i];
	q[n++] = '\'';
	q[n] = '\0';
	int err = replace_all(cmd, q, out, outlen);
	xfree(q);
	return err;
}

void notify_alert(struct daemon *d, const char *message)
{
	if (!d->conf->alertnotify[0])
		return;
	char cmd[4096];
	if (notify_alert_command(d->conf->alertnotify, message, cmd, sizeof(cmd))) {
		DLOG_ERR(&d->log, DLOG_MAIN,
		         "alertnotify: the command is too long with the message");
		return;
	}
	(void)notify_run(d, cmd);
}
