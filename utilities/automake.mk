# Tools: the test guest, the vhost-user front-end, the demo, the benchmark,
# the OVS preparation script, the Debian 13 root.

bin_PROGRAMS += utilities/ovs-vhost-guest
utilities_ovs_vhost_guest_SOURCES = utilities/ovs-vhost-guest.c
utilities_ovs_vhost_guest_CPPFLAGS = -DALLOW_EXPERIMENTAL_API
utilities_ovs_vhost_guest_CFLAGS = $(DPDK_CFLAGS) $(SANITIZER_FLAGS)
utilities_ovs_vhost_guest_LDADD = $(DPDK_LIBS)

# The vhost-user front-end of our own: plain C and libc (libm for the
# Poisson arrivals), no DPDK, no OVS.
bin_PROGRAMS += utilities/ovs-vhost-frontend
utilities_ovs_vhost_frontend_SOURCES = utilities/ovs-vhost-frontend.c
utilities_ovs_vhost_frontend_CPPFLAGS =
utilities_ovs_vhost_frontend_CFLAGS = $(OVS_WARNING_FLAGS) $(SANITIZER_FLAGS)
utilities_ovs_vhost_frontend_LDADD = -lm -lpthread

EXTRA_DIST += \
	utilities/ovs-vhost-prepare-ovs \
	utilities/ovs-vhost-prepare-root \
	utilities/ovs-vhost-prepare-debian13 \
	utilities/ovs-vhost-prepare-debian14 \
	utilities/ovs-vhost-demo \
	utilities/ovs-vhost-bench \
	utilities/ovs-vhost-rebuild-deb \
	utilities/ovs_vhost_stats.py
