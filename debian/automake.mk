# Debian packaging (see debian/rules), distributed with "make dist" so that
# dpkg-buildpackage also works from the tarball.

EXTRA_DIST += \
	debian/automake.mk \
	debian/changelog \
	debian/control \
	debian/copyright \
	debian/not-installed \
	debian/openvswitch-switch-vhost.README.Debian \
	debian/openvswitch-switch-vhost.install \
	debian/openvswitch-switch-vhost.postinst \
	debian/openvswitch-switch-vhost.postrm \
	debian/openvswitch-switch-vhost.prerm \
	debian/ovs-build-version \
	debian/rules \
	debian/source/format
