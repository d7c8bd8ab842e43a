package io.quorumkv.service.paxos;

/**
 * Where a coordinator's ballots come from: on a node, its hybrid logical clock and its id
 * (a ballot is above every timestamp the clock issued or observed).
 */
interface BallotClock {

	/** A new ballot, above every one this clock issued or observed. */
	Ballot next();

	/**
	 * Moves the clock past a timestamp seen elsewhere (a promised ballot, a stored
	 * version), so that the next ballot is above it.
	 * @return false when it was refused (too far ahead of the wall clock)
	 */
	boolean observe(long micros);

	/** The clock's time now, without issuing a timestamp (expiries are judged by it). */
	long current();

}
