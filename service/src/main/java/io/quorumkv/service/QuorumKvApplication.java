package io.quorumkv.service;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/** Starts one QuorumKV node. */
@SpringBootApplication
@ConfigurationPropertiesScan
public class QuorumKvApplication {

	public static void main(String[] args) {
		SpringApplication.run(QuorumKvApplication.class, args);
	}

}
