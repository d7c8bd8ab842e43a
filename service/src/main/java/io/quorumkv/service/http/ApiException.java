package io.quorumkv.service.http;

import org.springframework.http.HttpStatus;

/**
 * A request the API refuses, with the status and a short text that says what was wrong.
 * Thrown for bad input (4xx) and for conditions the client should retry (503, 504).
 */
class ApiException extends RuntimeException {

	private final HttpStatus status;

	ApiException(HttpStatus status, String message) {
		super(message, null, false, false);
		this.status = status;
	}

	public static ApiException badRequest(String message) {
		return new ApiException(HttpStatus.BAD_REQUEST, message);
	}

	public HttpStatus status() {
		return this.status;
	}

}
