# RPM packaging, as OVS's rhel/automake.mk: rhel/openvswitch-vhost.spec is
# made from its .in with this package's version and the OVS version of the
# tree we were configured with, and goes into "make dist".

EXTRA_DIST += \
	rhel/automake.mk \
	rhel/openvswitch-vhost.spec \
	rhel/openvswitch-vhost.spec.in

update_rhel_spec = \
  $(AM_V_GEN)sed -e 's,[@]VERSION[@],$(VERSION),g' \
                 -e 's,[@]OVS_VERSION[@],$(OVS_VERSION),g' \
    < $(srcdir)/rhel/$(@F).in > $(@F).tmp || exit 1; \
  if cmp -s $(@F).tmp $@; then touch $@; rm $(@F).tmp; else mv $(@F).tmp $@; fi

$(srcdir)/rhel/openvswitch-vhost.spec: rhel/openvswitch-vhost.spec.in $(top_builddir)/config.status
	$(update_rhel_spec)

RPMBUILD_TOP := $(abs_top_builddir)/rpm/rpmbuild
RPMBUILD_OPT ?= --without check

# Builds the RPMs from "make dist" and OVS_TARBALL, the release tarball of
# the Open vSwitch that the target's openvswitch package is
# (openvswitch-$(OVS_VERSION).tar.gz for the tree we were configured with).
rpm-fedora: dist $(srcdir)/rhel/openvswitch-vhost.spec
	@test -f "$(OVS_TARBALL)" || { \
	  echo "rpm-fedora: set OVS_TARBALL=.../openvswitch-$(OVS_VERSION).tar.gz" >&2; \
	  exit 1; }
	${MKDIR_P} ${RPMBUILD_TOP}/SOURCES
	cp ${DIST_ARCHIVES} ${RPMBUILD_TOP}/SOURCES
	cp $(OVS_TARBALL) ${RPMBUILD_TOP}/SOURCES/openvswitch-$(OVS_VERSION).tar.gz
	rpmbuild ${RPMBUILD_OPT} \
	         -D "_topdir ${RPMBUILD_TOP}" \
	         -D "ovs_version $(OVS_VERSION)" \
	         -ba $(srcdir)/rhel/openvswitch-vhost.spec
.PHONY: rpm-fedora
