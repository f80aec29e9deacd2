/*
 * daemon/datadir.c: the data directory, laid out as bitcoind's: the
 * config file at the top, each network's state in its own directory
 * (main's at the top, the others in regtest/, testnet3/, testnet4/,
 * signet/; conf/ names it conf->netdir), and in each a .lock file that
 * keeps a second peerd out.
 *
 * The lock is an open-file-description lock (F_OFD_SETLK) on
 * <netdir>/.lock, as Core's LockDirectory takes a POSIX record lock on
 * the same file: the kernel drops it when the process dies, however it
 * dies, so a crash never leaves a stale lock to clean up. OFD rather
 * than classic POSIX locks because a classic lock is per process (a
 * second open in the same process would "succeed" and closing any
 * descriptor of the file would drop it); an OFD lock belongs to the one
 * descriptor we keep.
 */
#include "daemon/program.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* mkdir -p with mode 0700 for what it creates. */
static int make_dirs(const char *path)
{
	if (!*path)
		return -EINVAL; /* conf/ refuses an empty datadir; never walk past the NUL */
	char *p = xstrdup(path);
	if (!p)
		return -ENOMEM;
	int rc = 0;
	for (char *s = p + 1;; s++) {
		if (*s != '/' && *s)
			continue;
		char c = *s;
		*s = 0;
		if (mkdir(p, 0700) != 0 && errno != EEXIST) {
			rc = -errno;
			break;
		}
		*s = c;
		if (!c)
			break;
	}
	xfree(p);
	return rc;
}

int datadir_open(struct daemon *d)
{
	const struct peerd_conf *c = d->conf;
	int err;
	/* A named datadir was checked to exist; creating it here would hide a
	 * typo made after the check. Only the default one is made. */
	if (!c->datadir_set && (err = make_dirs(c->datadir))) {
		DLOG_ERR(&d->log, DLOG_MAIN, "cannot create datadir %s: %s", c->datadir,
		         strerror(-err));
		return err;
	}
	if (mkdir(c->netdir, 0700) != 0 && errno != EEXIST) {
		err = -errno;
		DLOG_ERR(&d->log, DLOG_MAIN, "cannot create %s: %s", c->netdir, strerror(errno));
		return err;
	}

	size_t n = strlen(c->netdir) + sizeof("/.lock");
	char *path = xmalloc(n);
	if (!path)
		return -ENOMEM;
	snprintf(path, n, "%s/.lock", c->netdir);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	xfree(path);
	if (fd < 0) {
		err = -errno;
		DLOG_ERR(&d->log, DLOG_MAIN,
		         "Cannot write to directory '%s'; check permissions. (%s)", c->netdir,
		         strerror(errno));
		return err;
	}
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
	if (fcntl(fd, F_OFD_SETLK, &fl) != 0) {
		err = -errno;
		close(fd);
		if (err == -EAGAIN || err == -EACCES) {
			DLOG_ERR(&d->log, DLOG_MAIN,
			         "Cannot obtain a lock on directory %s. peerd is probably already "
			         "running.",
			         c->netdir);
			return -EAGAIN;
		}
		DLOG_ERR(&d->log, DLOG_MAIN, "cannot lock %s/.lock: %s", c->netdir, strerror(-err));
		return err;
	}
	d->lock_fd = fd;
	d->locked = true;
	return 0;
}

void datadir_close(struct daemon *d)
{
	if (!d->locked)
		return;
	close(d->lock_fd);
	d->locked = false;
}
