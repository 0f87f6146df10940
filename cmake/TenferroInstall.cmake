include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

get_property(layers GLOBAL PROPERTY TENFERRO_LAYERS)
install(TARGETS ${layers} tenferro EXPORT tenferroTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/tenferro DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT tenferroTargets NAMESPACE tenferro:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tenferro)
configure_package_config_file(cmake/tenferroConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/tenferroConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tenferro)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/tenferroConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/tenferroConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/tenferroConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tenferro)
