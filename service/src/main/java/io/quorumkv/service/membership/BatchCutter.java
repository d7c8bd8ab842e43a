package io.quorumkv.service.membership;

import java.util.function.Predicate;

import io.quorumkv.service.membership.TransferCodec.Frame;

/**
 * Cuts a transfer's frames into the batches the target writes: at most a byte size or
 * {@value #MAX_BATCH_ENTRIES} entries; a progress frame always ends one.
 */
final class BatchCutter implements Predicate<Frame> {

	static final int MAX_BATCH_ENTRIES = 1024;

	private final long maxBytes;

	private long bytes;

	private int count;

	BatchCutter(long maxBytes) {
		this.maxBytes = maxBytes;
	}

	@Override
	public boolean test(Frame frame) {
		if (frame instanceof Frame.Data data) {
			this.bytes += TransferSource.size(data.entry());
		}
		this.count++;
		if (this.bytes >= this.maxBytes || this.count >= MAX_BATCH_ENTRIES || frame instanceof Frame.Progress) {
			this.bytes = 0;
			this.count = 0;
			return true;
		}
		return false;
	}

}
