/*
 * daemon/p2p/peersdat.c: <netdir>/peers.dat, the address manager on disk,
 * as Core's addrdb.cpp (LoadAddrman, DumpPeerAddresses) and CConnman's
 * DumpAddresses.
 *
 * At start (after the datadir lock, so a second peerd never reads or
 * writes the first one's file) d->addrman is filled from peers.dat:
 *   - missing: start empty and write the empty file at once (Core logs
 *     "Creating peers.dat because the file was not found" and dumps);
 *   - a newer, incompatible format: rename it to peers.dat.bak, start
 *     empty, dump, and warn as Core;
 *   - corrupt (bad magic, checksum, contents): refuse to start with Core's
 *     "Invalid or corrupt peers.dat (...)" error, naming the file.
 * The file is written atomically (addrman_write_file: temporary file,
 * fsync, rename) every 15 minutes (Core's DUMP_PEERS_INTERVAL) and at
 * shutdown.
 */
#include "daemon/p2p/p2p.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "addrman/addrman.h"
#include "base/alloc.h"

/** Core's DUMP_PEERS_INTERVAL: 15 minutes. */
#define PEERSDAT_DUMP_INTERVAL_MS (15u * 60u * 1000u)
/** Where a peers.dat problem is to be reported (Core names its own tracker). */
#define PEERSDAT_BUGREPORT "the peerd maintainers"

static int path_of(const struct daemon *d, const char *suffix, char *out, size_t cap)
{
	int n = snprintf(out, cap, "%s/peers.dat%s", d->conf->netdir, suffix);
	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

/* A fresh addrman in place of one a failed read may have left half filled. */
static int fresh_addrman(struct daemon *d)
{
	struct addrman *am = addrman_new(d->conf->test_addrman, d->conf->checkaddrman);
	if (!am)
		return -ENOMEM;
	addrman_free(d->addrman);
	d->addrman = am;
	return 0;
}

int peersdat_load(struct daemon *d)
{
	char path[4096], bak[4096], why[ADDRMAN_ERRMSG_MAX];
	int err;
	if ((err = path_of(d, "", path, sizeof(path))) ||
	    (err = path_of(d, ".bak", bak, sizeof(bak))))
		return err;
	uint64_t t0 = uv_hrtime();
	why[0] = 0;
	err = addrman_read_file(d->addrman, path, d->params->magic, why, sizeof(why));
	switch (err) {
	case 0:
		DLOG_INFO_(&d->log, DLOG_MAIN, "Loaded %zu addresses from peers.dat  %llums",
		           addrman_size(d->addrman, -1, -1),
		           (unsigned long long)((uv_hrtime() - t0) / 1000000u));
		break;
	case ADDRMAN_ENOENT:
		if ((err = fresh_addrman(d)))
			return err;
		DLOG_INFO_(&d->log, DLOG_MAIN,
		           "Creating peers.dat because the file was not found (\"%s\")", path);
		(void)peersdat_dump(d);
		break;
	case ADDRMAN_EVERSION:
		if (rename(path, bak) != 0) {
			DLOG_ERR(&d->log, DLOG_MAIN,
			         "Failed to rename invalid peers.dat file. Please move "
			         "or delete it and try again.");
			return -EIO;
		}
		if ((err = fresh_addrman(d)))
			return err;
		DLOG_WARNING(&d->log, DLOG_MAIN,
		             "Creating new peers.dat because the file version was not compatible "
		             "(\"%s\"). Original backed up to peers.dat.bak",
		             path);
		(void)peersdat_dump(d);
		break;
	case ADDRMAN_ENOMEM:
		return -ENOMEM;
	default: {
		/* Corrupt or unreadable: Core refuses to start (any exception). */
		char msg[ADDRMAN_ERRMSG_MAX + 4096 + 256];
		addrman_corrupt_message(msg, sizeof(msg), why[0] ? why : addrman_strerror(err),
		                        path, PEERSDAT_BUGREPORT);
		DLOG_ERR(&d->log, DLOG_MAIN, "%s", msg);
		return -EINVAL;
	}
	}
	d->addr->next_dump_ms = daemon_now_ms(d) + PEERSDAT_DUMP_INTERVAL_MS;
	d->addr->loaded = true;
	return 0;
}

int peersdat_dump(struct daemon *d)
{
	char path[4096];
	int err = path_of(d, "", path, sizeof(path));
	if (err)
		return err;
	uint64_t t0 = uv_hrtime();
	err = addrman_write_file(d->addrman, path, d->params->magic);
	if (err) {
		DLOG_WARNING(&d->log, DLOG_MAIN, "cannot write %s: %s", path,
		             addrman_strerror(err));
		return err;
	}
	DLOG_DBG(&d->log, DLOG_ADDR, "Flushed %zu addresses to peers.dat  %llums",
	         addrman_size(d->addrman, -1, -1),
	         (unsigned long long)((uv_hrtime() - t0) / 1000000u));
	return 0;
}

void peersdat_tick(struct daemon *d, uint64_t now_ms)
{
	if (!d->addr->loaded || now_ms < d->addr->next_dump_ms)
		return;
	d->addr->next_dump_ms = now_ms + PEERSDAT_DUMP_INTERVAL_MS;
	(void)peersdat_dump(d);
}

void peersdat_shutdown(struct daemon *d)
{
	/* Only a file this run read (or created) is written back: a start
	 * that stopped before reading it must not overwrite it. */
	if (d->addr->loaded)
		(void)peersdat_dump(d);
}
