package io.quorumkv.client;

/**
 * {@link QuorumKvClient#update} gave up: in each of its
 * {@link UpdatePolicy#maxAttempts()} rounds another writer changed the key between the
 * read and the conditional write (each write answered 412). Nothing of this update was
 * applied; {@link #attempts()} is the number of rounds. Contention this heavy on one key
 * calls for fewer writers of it, or a policy with more rounds and longer waits.
 */
public final class UpdateConflictException extends QuorumKvException {

	UpdateConflictException(String message) {
		super(message, null, 412, null);
	}

	@Override
	public boolean mayHaveBeenApplied() {
		return false;
	}

}
