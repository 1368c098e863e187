// SPDX-License-Identifier: MIT
/* test_vif_create.c - pvnet_vif_create() asking pvnetd for the device ("vif-create") */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/*
 * Not cmocka: one vif asked of pvnetd, which writes the device directories
 * as a toolstack would and connects its backend.  Both must happen: an
 * error, a timeout waiting for the backend among them, fails the test.
 */

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);   \
			failed = 1;                                                                \
			goto out;                                                                  \
		}                                                                                  \
	} while (0)

int main(int argc, char **argv)
{
	struct pvnet_vif_config cfg;
	struct pvnet_domain *dom = NULL;
	struct pvnet_vif *vif = NULL;
	struct harness h;
	char fe[128];
	int failed = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s PVNETD\n", argv[0]);
		return 2;
	}
	if (h_start(&h, argv[1]) < 0) {
		fprintf(stderr, "cannot start pvnetd\n");
		return 1;
	}
	CHECK(pvnet_domain_create(h.run_dir, 2048, &dom) == 0);
	pvnet_vif_config_default(&cfg);
	cfg.devid = 3;
	cfg.timeout_ms = 2000;
	CHECK(pvnet_vif_create(dom, &cfg, &vif) == 0);
	snprintf(fe, sizeof(fe), "/local/domain/%u/device/vif/3", pvnet_domain_id(dom));
	/* What a toolstack must have written, as libxl does. */
	CHECK(h_exists(&h, "%s/backend", fe));
	CHECK(h_read_int(&h, "%s/backend-id", fe) == 0);
	CHECK(h_exists(&h, "%s/mac", fe));
	CHECK(h_read_int(&h, "/local/domain/0/backend/vif/%u/3/frontend-id",
			 pvnet_domain_id(dom)) == pvnet_domain_id(dom));
	CHECK(!strcmp(pvnet_vif_frontend_path(vif), fe));
	CHECK(pvnet_vif_state(vif) == XenbusStateConnected);
out:
	pvnet_vif_destroy(vif);
	pvnet_domain_destroy(dom);
	if (h_stop(&h) < 0)
		failed = 1;
	return failed;
}
