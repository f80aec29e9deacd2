/*
 * daemon/sdnotify.c: systemd readiness and status (sd_notify).
 *
 * READY=1 once the listeners and the control socket are up, STATUS= with
 * the peer counts whenever they change (at most once per DAEMON_STATUS_MS,
 * checked on the slow tick), STOPPING=1 when shutdown begins. Outside
 * systemd ($NOTIFY_SOCKET unset) sd_notify does nothing.
 */
#include "daemon/program.h"

#include <stdio.h>
#include <string.h>
#include <systemd/sd-daemon.h>

static void status_text(const struct daemon *d, char *out, size_t len)
{
	char chain[64];
	validation_status(d, chain, sizeof(chain));
	snprintf(out, len, "%u peers (%u inbound, %u outbound); %s", d->n_inbound + d->n_outbound,
	         d->n_inbound, d->n_outbound, chain);
}

void sdnotify_ready(struct daemon *d)
{
	char msg[256];
	status_text(d, d->last_status, sizeof(d->last_status));
	snprintf(msg, sizeof(msg), "READY=1\nSTATUS=%s", d->last_status);
	d->last_status_ms = daemon_now_ms(d);
	int rc = sd_notify(0, msg);
	if (rc < 0)
		DLOG_WARNING(&d->log, DLOG_MAIN, "sd_notify READY failed: %s", strerror(-rc));
	else if (rc > 0)
		DLOG_DBG(&d->log, DLOG_MAIN, "told systemd we are ready");
}

void sdnotify_status(struct daemon *d, bool force)
{
	uint64_t now = daemon_now_ms(d);
	if (!force && now - d->last_status_ms < DAEMON_STATUS_MS)
		return;
	char s[sizeof(d->last_status)];
	status_text(d, s, sizeof(s));
	if (!force && strcmp(s, d->last_status) == 0)
		return;
	memcpy(d->last_status, s, sizeof(s));
	d->last_status_ms = now;
	char msg[256];
	snprintf(msg, sizeof(msg), "STATUS=%s", s);
	(void)sd_notify(0, msg);
}

void sdnotify_text(struct daemon *d, const char *text)
{
	char msg[256];
	snprintf(msg, sizeof(msg), "STATUS=%s", text);
	snprintf(d->last_status, sizeof(d->last_status), "%s", text);
	(void)sd_notify(0, msg);
}

void sdnotify_stopping(struct daemon *d)
{
	(void)d;
	(void)sd_notify(0, "STOPPING=1\nSTATUS=shutting down");
}
