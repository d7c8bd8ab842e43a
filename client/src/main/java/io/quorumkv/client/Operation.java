package io.quorumkv.client;

/** What a request does, for the retry rules: reads may be repeated, writes may not. */
enum Operation {

	GET(true), PUT(false), DELETE(false), SCAN(true);

	private final boolean read;

	Operation(boolean read) {
		this.read = read;
	}

	boolean isRead() {
		return this.read;
	}

}
