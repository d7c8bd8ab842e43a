package io.quorumkv.client;

/**
 * What a request does, for the retry rules: reads may be repeated, writes may not, and a
 * conditional write is never repeated once it may have reached a node (a repeat of one
 * that was applied answers 412, hiding its success).
 */
enum Operation {

	GET(true, false, "GET"), PUT(false, false, "PUT"), DELETE(false, false, "DELETE"), SCAN(true, false, "SCAN"),
	PUT_IF(false, true, "conditional PUT"), DELETE_IF(false, true, "conditional DELETE");

	private final boolean read;

	private final boolean conditional;

	private final String text;

	Operation(boolean read, boolean conditional, String text) {
		this.read = read;
		this.conditional = conditional;
		this.text = text;
	}

	boolean isRead() {
		return this.read;
	}

	boolean isConditional() {
		return this.conditional;
	}

	@Override
	public String toString() {
		return this.text;
	}

}
