/* proto/errors.c: names and descriptions of proto_err codes. */
#include "proto/proto.h"

static const struct {
	const char *name;
	const char *text;
} errs[] = {
    [0] = {"OK", "success"},
    [-PROTO_ETRUNC] = {"ETRUNC", "input ends before the item does"},
    [-PROTO_ETRAILING] = {"ETRAILING", "bytes left over after the payload"},
    [-PROTO_EMAGIC] = {"EMAGIC", "network magic does not match"},
    [-PROTO_ECOMMAND] = {"ECOMMAND", "malformed command name"},
    [-PROTO_EOVERSIZE] = {"EOVERSIZE", "length over its limit"},
    [-PROTO_ECHECKSUM] = {"ECHECKSUM", "payload checksum mismatch"},
    [-PROTO_ECOUNT] = {"ECOUNT", "element count over its limit"},
    [-PROTO_ENONCANON] = {"ENONCANON", "non-canonical CompactSize encoding"},
    [-PROTO_ENOMEM] = {"ENOMEM", "out of memory"},
    [-PROTO_EVALUE] = {"EVALUE", "field value out of range"},
    [-PROTO_ENOSPACE] = {"ENOSPACE", "output buffer full"},
    [-PROTO_EUNKNOWN] = {"EUNKNOWN", "unknown command"},
    [-PROTO_EHEX] = {"EHEX", "invalid hex"},
};

const char *proto_strerror(int err)
{
	if (err > 0 || err < PROTO_ERR__MIN)
		return "unknown error";
	return errs[-err].text;
}

const char *proto_errname(int err)
{
	if (err > 0 || err < PROTO_ERR__MIN)
		return "EUNKNOWNCODE";
	return errs[-err].name;
}
