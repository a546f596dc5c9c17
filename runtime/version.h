/*
 * version.h: the release of mpiv, printed by `mpiv version` and sent by
 * a node agent when it registers (the wire protocol's own version is
 * FRAME_VERSION, frame.h).
 */
#ifndef MPIV_VERSION_H
#define MPIV_VERSION_H

#define MPIV_VERSION "0.1.0"

#endif
