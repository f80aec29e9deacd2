/**
 * base/version.h: peerd's version, shared by peerd, peerctl and peertool
 * (subversion "/peerd:X.Y.Z/" on the wire, getnetworkinfo, -version).
 */
#ifndef PEERD_BASE_VERSION_H
#define PEERD_BASE_VERSION_H

#define PEERD_VERSION_MAJOR  0
#define PEERD_VERSION_MINOR  1
#define PEERD_VERSION_PATCH  0
#define PEERD_VERSION_STRING "0.1.0"
/** As getnetworkinfo's "version": MAJOR*10000 + MINOR*100 + PATCH. */
#define PEERD_VERSION_NUMBER                                                                       \
	(PEERD_VERSION_MAJOR * 10000 + PEERD_VERSION_MINOR * 100 + PEERD_VERSION_PATCH)

#endif
