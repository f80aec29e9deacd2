/*
 * fees/file.c: fee_estimates.dat as Core writes and reads it
 * (CBlockPolicyEstimator::Write and Read): the version needed to read
 * (149900), a field Core 29 no longer reads (0), the best height, the
 * span of blocks the data covers, the bucket bounds, then the medium,
 * short and long horizons, each its decay, scale and moving averages.
 * Integers are little-endian, doubles their IEEE 754 bits (Core's
 * EncodeDouble), vectors a CompactSize count first.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "fees/internal.h"

/* Core's CURRENT_FEES_FILE_VERSION. */
#define FEES_FILE_VERSION 149900

/* ---- writing ------------------------------------------------------------------ */

struct wbuf {
	uint8_t *p;
	size_t n, cap;
	bool oom;
};

static void put(struct wbuf *w, const void *src, size_t n)
{
	if (w->oom)
		return;
	if (w->n + n > w->cap) {
		size_t ncap = w->cap ? w->cap * 2 : 4096;
		while (ncap < w->n + n)
			ncap *= 2;
		uint8_t *np = xrealloc(w->p, ncap);
		if (!np) {
			w->oom = true;
			return;
		}
		w->p = np;
		w->cap = ncap;
	}
	memcpy(w->p + w->n, src, n);
	w->n += n;
}

static void put_u32(struct wbuf *w, uint32_t v)
{
	uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
	put(w, b, 4);
}

static void put_u64(struct wbuf *w, uint64_t v)
{
	put_u32(w, (uint32_t)v);
	put_u32(w, (uint32_t)(v >> 32));
}

static void put_double(struct wbuf *w, double d)
{
	uint64_t v;
	memcpy(&v, &d, sizeof(v));
	put_u64(w, v);
}

static void put_compact(struct wbuf *w, uint64_t n)
{
	uint8_t b;
	if (n < 253) {
		b = (uint8_t)n;
		put(w, &b, 1);
	} else if (n <= 0xffff) {
		b = 253;
		put(w, &b, 1);
		uint8_t x[2] = {(uint8_t)n, (uint8_t)(n >> 8)};
		put(w, x, 2);
	} else {
		b = 254;
		put(w, &b, 1);
		put_u32(w, (uint32_t)n);
	}
}

static void put_vec(struct wbuf *w, const double *v, size_t n)
{
	put_compact(w, n);
	for (size_t i = 0; i < n; i++)
		put_double(w, v[i]);
}

static void put_stats(struct wbuf *w, const struct fees_stats *s)
{
	put_double(w, s->decay);
	put_u32(w, s->scale);
	put_vec(w, s->feerate_avg, s->nb);
	put_vec(w, s->tx_ct_avg, s->nb);
	put_compact(w, s->periods);
	for (size_t i = 0; i < s->periods; i++)
		put_vec(w, s->conf_avg + i * s->nb, s->nb);
	put_compact(w, s->periods);
	for (size_t i = 0; i < s->periods; i++)
		put_vec(w, s->fail_avg + i * s->nb, s->nb);
}

int fees_serialize(const struct fees_estimator *f, uint8_t **out, size_t *len)
{
	struct wbuf w = {0};
	put_u32(&w, FEES_FILE_VERSION);
	put_u32(&w, 0); /* Core 29's unused field */
	put_u32(&w, f->best_height);
	unsigned span = f->first_recorded ? f->best_height - f->first_recorded : 0;
	unsigned hspan = 0;
	if (f->historical_first && f->best_height - f->historical_best <= 6 * 1008)
		hspan = f->historical_best - f->historical_first;
	/* The span the data covers: this run's when it is the longer, else the file's. */
	if (span > hspan / 2) {
		put_u32(&w, f->first_recorded);
		put_u32(&w, f->best_height);
	} else {
		put_u32(&w, f->historical_first);
		put_u32(&w, f->historical_best);
	}
	put_vec(&w, f->buckets, f->nb);
	put_stats(&w, &f->stats[FEES_MEDIUM]);
	put_stats(&w, &f->stats[FEES_SHORT]);
	put_stats(&w, &f->stats[FEES_LONG]);
	if (w.oom) {
		xfree(w.p);
		return FEES_ENOMEM;
	}
	*out = w.p;
	*len = w.n;
	return 0;
}

int fees_write(const struct fees_estimator *f, const char *path)
{
	struct wbuf w = {0};
	int err = fees_serialize(f, &w.p, &w.n);
	if (err)
		return err;
	char tmp[4096];
	err = FEES_EIO;
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.new", path) >= sizeof(tmp))
		goto out;
	FILE *fp = fopen(tmp, "wb");
	if (!fp)
		goto out;
	bool ok = fwrite(w.p, 1, w.n, fp) == w.n;
	ok = fflush(fp) == 0 && ok;
	ok = fclose(fp) == 0 && ok;
	if (!ok || rename(tmp, path) != 0) {
		remove(tmp);
		goto out;
	}
	err = 0;
out:
	xfree(w.p);
	return err;
}

/* ---- reading ------------------------------------------------------------------ */

struct rbuf {
	const uint8_t *p;
	size_t n, off;
	bool eof;
};

static uint32_t get_u32(struct rbuf *r)
{
	if (r->n - r->off < 4) {
		r->eof = true;
		r->off = r->n;
		return 0;
	}
	const uint8_t *b = r->p + r->off;
	r->off += 4;
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static double get_double(struct rbuf *r)
{
	uint64_t lo = get_u32(r), hi = get_u32(r);
	uint64_t v = lo | hi << 32;
	double d;
	memcpy(&d, &v, sizeof(d));
	return d;
}

static uint64_t get_compact(struct rbuf *r)
{
	if (r->off >= r->n) {
		r->eof = true;
		return 0;
	}
	uint8_t b = r->p[r->off++];
	if (b < 253)
		return b;
	if (b == 253) {
		if (r->n - r->off < 2) {
			r->eof = true;
			return 0;
		}
		uint64_t v = (uint64_t)r->p[r->off] | (uint64_t)r->p[r->off + 1] << 8;
		r->off += 2;
		return v;
	}
	if (b == 254)
		return get_u32(r);
	uint64_t lo = get_u32(r), hi = get_u32(r);
	return lo | hi << 32;
}

static int corrupt(struct fees_estimator *f, const char *why)
{
	snprintf(f->err, sizeof(f->err), "%s", why);
	return FEES_ECORRUPT;
}

/* A vector of doubles of exactly `want` entries into out (or of any size
 * up to `max` into *alloc when want is 0). */
static int get_vec(struct rbuf *r, double *out, size_t want, size_t *got)
{
	uint64_t n = get_compact(r);
	*got = (size_t)n;
	if (r->eof || n != want)
		return -1;
	if ((r->n - r->off) / 8 < n) {
		r->eof = true;
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		out[i] = get_double(r);
	return 0;
}

/* Core's TxConfirmStats::Read into a fresh horizon for nb buckets. */
static int read_stats(struct fees_estimator *f, struct rbuf *r, struct fees_stats *s, size_t nb)
{
	double decay = get_double(r);
	if (r->eof)
		return corrupt(f, "end of data");
	if (decay <= 0 || decay >= 1)
		return corrupt(
		    f, "Corrupt estimates file. Decay must be between 0 and 1 (non-inclusive)");
	unsigned scale = get_u32(r);
	if (r->eof)
		return corrupt(f, "end of data");
	if (scale == 0)
		return corrupt(f, "Corrupt estimates file. Scale must be non-zero");
	/* The periods come after two vectors: peek at them by reading into scratch first. */
	size_t got;
	double *fr = xcalloc(nb, sizeof(double)), *ct = xcalloc(nb, sizeof(double));
	int err = FEES_ENOMEM;
	if (!fr || !ct)
		goto out;
	err = get_vec(r, fr, nb, &got);
	if (err) {
		err = r->eof ? corrupt(f, "end of data")
		             : corrupt(f, "Corrupt estimates file. Mismatch in feerate average "
		                          "bucket count");
		goto out;
	}
	if ((err = get_vec(r, ct, nb, &got))) {
		err = r->eof
		          ? corrupt(f, "end of data")
		          : corrupt(f, "Corrupt estimates file. Mismatch in tx count bucket count");
		goto out;
	}
	uint64_t periods = get_compact(r);
	if (r->eof || periods > 6 * 24 * 7) {
		err = corrupt(f, r->eof ? "end of data"
		                        : "Corrupt estimates file.  Must maintain estimates for "
		                          "between 1 and 1008 (one week) confirms");
		goto out;
	}
	uint64_t confirms = (uint64_t)scale * periods;
	if (confirms == 0 || confirms > 6 * 24 * 7) {
		err = corrupt(f, "Corrupt estimates file.  Must maintain estimates for between 1 "
		                 "and 1008 (one week) confirms");
		goto out;
	}
	if ((err = fees_stats_init(s, nb, (size_t)periods, decay, scale)))
		goto out;
	memcpy(s->feerate_avg, fr, nb * sizeof(double));
	memcpy(s->tx_ct_avg, ct, nb * sizeof(double));
	for (size_t i = 0; i < periods; i++) {
		if (get_vec(r, s->conf_avg + i * nb, nb, &got)) {
			err =
			    corrupt(f, r->eof ? "end of data"
			                      : "Corrupt estimates file. Mismatch in feerate conf "
			                        "average bucket count");
			goto out;
		}
	}
	uint64_t fperiods = get_compact(r);
	if (r->eof || fperiods != periods) {
		err =
		    corrupt(f, r->eof ? "end of data"
		                      : "Corrupt estimates file. Mismatch in confirms tracked for "
		                        "failures");
		goto out;
	}
	for (size_t i = 0; i < periods; i++) {
		if (get_vec(r, s->fail_avg + i * nb, nb, &got)) {
			err = corrupt(f, r->eof
			                     ? "end of data"
			                     : "Corrupt estimates file. Mismatch in one of failure "
			                       "average bucket counts");
			goto out;
		}
	}
	err = 0;
out:
	xfree(fr);
	xfree(ct);
	return err;
}

int fees_read(struct fees_estimator *f, const char *path)
{
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return FEES_EIO;
	uint8_t *data = NULL;
	size_t n = 0, cap = 0;
	int err = FEES_EIO;
	for (;;) {
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 65536;
			uint8_t *np = xrealloc(data, ncap);
			if (!np) {
				err = FEES_ENOMEM;
				goto out_file;
			}
			data = np;
			cap = ncap;
		}
		size_t k = fread(data + n, 1, cap - n, fp);
		n += k;
		if (k == 0)
			break;
	}
	if (ferror(fp))
		goto out_file;
	fclose(fp);
	fp = NULL;
	err = fees_parse(f, data, n);
out_file:
	if (fp)
		fclose(fp);
	xfree(data);
	return err;
}

int fees_parse(struct fees_estimator *f, const uint8_t *data, size_t n)
{
	int err;
	struct rbuf r = {.p = data, .n = n};
	struct fees_stats st[FEES_N_HORIZONS];
	memset(st, 0, sizeof(st));
	double *buckets = NULL;
	int32_t required = (int32_t)get_u32(&r);
	(void)get_u32(&r); /* the version that wrote it: not read since Core 29 */
	uint32_t best = get_u32(&r);
	if (r.eof) {
		err = corrupt(f, "end of data");
		goto out;
	}
	if (required > FEES_FILE_VERSION) {
		snprintf(f->err, sizeof(f->err), "File version (%d) too high to be read.",
		         (int)required);
		err = FEES_ECORRUPT;
		goto out;
	}
	if (required < FEES_FILE_VERSION) {
		/* Core: "Incompatible old fee estimation data (non-fatal)", and nothing read. */
		err = 0;
		goto out;
	}
	uint32_t hfirst = get_u32(&r), hbest = get_u32(&r);
	if (r.eof) {
		err = corrupt(f, "end of data");
		goto out;
	}
	if (hfirst > hbest || hbest > best) {
		err = corrupt(f, "Corrupt estimates file. Historical block range for estimates is "
		                 "invalid");
		goto out;
	}
	uint64_t nb = get_compact(&r);
	if (r.eof) {
		err = corrupt(f, "end of data");
		goto out;
	}
	if (nb <= 1 || nb > 1000) {
		err = corrupt(
		    f, "Corrupt estimates file. Must have between 2 and 1000 feerate buckets");
		goto out;
	}
	buckets = xcalloc((size_t)nb, sizeof(double));
	if (!buckets) {
		err = FEES_ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nb; i++)
		buckets[i] = get_double(&r);
	if (r.eof) {
		err = corrupt(f, "end of data");
		goto out;
	}
	static const enum fees_horizon order[] = {FEES_MEDIUM, FEES_SHORT, FEES_LONG};
	for (int k = 0; k < FEES_N_HORIZONS; k++)
		if ((err = read_stats(f, &r, &st[order[k]], (size_t)nb)))
			goto out;
	/* Parsed: it replaces what there was. */
	for (int k = 0; k < FEES_N_HORIZONS; k++) {
		fees_stats_release(&f->stats[k]);
		f->stats[k] = st[k];
		memset(&st[k], 0, sizeof(st[k]));
	}
	xfree(f->buckets);
	f->buckets = buckets;
	buckets = NULL;
	f->nb = (size_t)nb;
	f->best_height = best;
	f->historical_first = hfirst;
	f->historical_best = hbest;
	err = 0;
out:
	for (int k = 0; k < FEES_N_HORIZONS; k++)
		fees_stats_release(&st[k]);
	xfree(buckets);
	return err;
}

const char *fees_last_error(const struct fees_estimator *f)
{
	return f->err;
}
