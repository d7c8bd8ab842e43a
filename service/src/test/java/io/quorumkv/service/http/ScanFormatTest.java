package io.quorumkv.service.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.http.MediaType;

/** The range's format by the {@code Accept} header, as Spring parses it. */
class ScanFormatTest {

	@Test
	void theHigherQualityWinsAndTheDefaultWinsATie() {
		assertThat(accepted("")).isEqualTo(ScanFormat.NDJSON);
		assertThat(accepted("*/*")).isEqualTo(ScanFormat.NDJSON);
		assertThat(accepted("application/octet-stream")).isEqualTo(ScanFormat.RECORDS);
		assertThat(accepted("application/x-ndjson")).isEqualTo(ScanFormat.NDJSON);
		assertThat(accepted("application/x-ndjson;q=0.5, */*")).isEqualTo(ScanFormat.RECORDS);
		assertThat(accepted("application/x-ndjson, application/octet-stream")).isEqualTo(ScanFormat.NDJSON);
		assertThat(accepted("application/octet-stream;q=0.2, application/*;q=0.9")).isEqualTo(ScanFormat.NDJSON);
		assertThat(accepted("*/*, application/octet-stream;q=0")).isEqualTo(ScanFormat.NDJSON);
		assertThat(accepted("text/html")).isEqualTo(ScanFormat.NDJSON);
		assertThatThrownBy(() -> accepted("*/*;q=0")).isInstanceOf(ApiException.class).hasMessageContaining("refuses");
		assertThatThrownBy(() -> accepted("application/x-ndjson;q=0, application/octet-stream;q=0.000"))
			.isInstanceOf(ApiException.class);
	}

	private static ScanFormat accepted(String header) {
		List<MediaType> accept = header.isEmpty() ? List.of() : MediaType.parseMediaTypes(header);
		return ScanFormat.accepted(accept);
	}

}
