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

# Builds the RPMs from "make dist" and the distribution's openvswitch
# source RPM OVS_SRPM (e.g. "dnf download --source openvswitch"): its %prep
# (upstream tarball plus the distribution's patches) is run in a _topdir of
# its own and packed as Source1, and the spec requires exactly that
# openvswitch version-release (see the spec).  Or, without the
# distribution's patches, from OVS_TARBALL, the upstream release tarball
# openvswitch-$(OVS_VERSION).tar.gz.  Not tested by this project.
rpm-fedora: dist $(srcdir)/rhel/openvswitch-vhost.spec
	${MKDIR_P} ${RPMBUILD_TOP}/SOURCES
	cp ${DIST_ARCHIVES} ${RPMBUILD_TOP}/SOURCES
	@if test -f "$(OVS_SRPM)"; then \
	  set -e; \
	  v=`rpm -qp --qf '%{VERSION}' "$(OVS_SRPM)"`; \
	  r=`rpm -qp --qf '%{RELEASE}' "$(OVS_SRPM)"`; \
	  top=${RPMBUILD_TOP}/ovs-srpm; rm -rf $$top; ${MKDIR_P} $$top; \
	  rpm -i --nosignature -D "_topdir $$top" "$(OVS_SRPM)"; \
	  rpmbuild -bp --nodeps -D "_topdir $$top" $$top/SPECS/*.spec; \
	  tree=`find $$top/BUILD -maxdepth 3 -type f -path '*/vswitchd/bridge.c' | head -n 1`; \
	  tree=`dirname "$$tree"`; tree=`dirname "$$tree"`; \
	  test -f "$$tree/configure.ac" || { echo "rpm-fedora: no prepared OVS tree from $(OVS_SRPM)" >&2; exit 1; }; \
	  tar -czf ${RPMBUILD_TOP}/SOURCES/openvswitch-$$v-$$r.prepared.tar.gz \
	    -C "$$tree/.." --transform "s,^`basename $$tree`,openvswitch-$$v," `basename $$tree`; \
	  echo "rpm-fedora: OVS $$v-$$r from $(OVS_SRPM)"; \
	  rpmbuild ${RPMBUILD_OPT} \
	    -D "_topdir ${RPMBUILD_TOP}" \
	    -D "ovs_version $$v" -D "ovs_release $$r" \
	    -ba $(srcdir)/rhel/openvswitch-vhost.spec; \
	elif test -f "$(OVS_TARBALL)"; then \
	  cp $(OVS_TARBALL) ${RPMBUILD_TOP}/SOURCES/openvswitch-$(OVS_VERSION).tar.gz; \
	  rpmbuild ${RPMBUILD_OPT} \
	    -D "_topdir ${RPMBUILD_TOP}" \
	    -D "ovs_version $(OVS_VERSION)" \
	    -ba $(srcdir)/rhel/openvswitch-vhost.spec; \
	else \
	  echo "rpm-fedora: set OVS_SRPM=.../openvswitch-$(OVS_VERSION)-*.src.rpm (the distribution's) or OVS_TARBALL=.../openvswitch-$(OVS_VERSION).tar.gz (upstream)" >&2; \
	  exit 1; \
	fi
.PHONY: rpm-fedora
