/**
 * The nemesis suite (issue 28): real node processes attacked with kills, pauses,
 * partitions, clock skew, full disks and restores from old copies while concurrent
 * clients (two writers to a key) write, some with a ttl, delete, read, some reads
 * conditional, and read range pages; every invocation and completion is recorded in a
 * {@link io.quorumkv.service.nemesis.History} with the versions reads answered, and the
 * {@link io.quorumkv.service.nemesis.Checker} finds lost acknowledged writes, resurrected
 * deletes, stale reads (GETs, 304s, scan pages), values never written, phantom versions,
 * values read past their ttl and wrong conditional answers.
 */
@NullMarked
package io.quorumkv.service.nemesis;

import org.jspecify.annotations.NullMarked;
