/*
 * daemon/net/ban_internal.h: between net/ban.c (the bans) and
 * net/ban_writer.c (banlist.json written off the loop). Private to net/.
 */
#ifndef PEERD_DAEMON_NET_BAN_INTERNAL_H
#define PEERD_DAEMON_NET_BAN_INTERNAL_H

#include "daemon/net/net.h"

/**
 * banlist.json at path from the n entries v, in Core's format, atomically
 * (path.new, fsync, rename, fsync of the directory); a failure is logged
 * to log. 0 or -errno. Any thread: it reads only its arguments.
 */
int ban_file_write(const struct dlog *log, const char *path, const struct ban_entry *v, uint32_t n);

/**
 * The bans changed (s->gen moved on): have them written by the writer
 * thread (started on first use) from a copy made now, or, while it is
 * busy, from a copy made when it is done (ban_writer_kick again from the
 * slow tick). False when the writer cannot be used (no memory, no
 * thread): the caller writes synchronously. Loop thread.
 */
bool ban_writer_kick(struct daemon *d);
/** Wait until the writer is idle and drop a copy it has not begun: the
 * caller writes the current bans itself, unless the file already holds
 * them (true: the writer's last write was of s->gen). Loop thread. */
bool ban_writer_settle(struct ban_state *s);
/** Stop and free the writer (after settling it). Loop thread. */
void ban_writer_stop(struct ban_state *s);
/** The file holds s->gen (ban_save wrote it, or there is nothing to write):
 * every wait is done. Loop thread. */
void ban_waits_done(struct daemon *d);

#endif
