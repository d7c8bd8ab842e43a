package io.quorumkv.service.repair;

import io.quorumkv.service.cluster.ClockGuard;
import io.quorumkv.service.cluster.Node;
import io.quorumkv.service.peer.Pacer;
import io.quorumkv.storage.Storage;
import reactor.core.scheduler.Scheduler;

/**
 * What a repair works with.
 *
 * @param self this node
 * @param storage this node's data
 * @param peers the calls to the peers
 * @param clock where pulled timestamps are checked and adopted
 * @param settings repair's settings
 * @param pacer the node's repair rate limit
 * @param scheduler the threads repair works on (never an event loop)
 */
record RepairContext(Node self, Storage storage, RepairPeers peers, ClockGuard clock, RepairSettings settings,
		Pacer pacer, Scheduler scheduler) {

}
