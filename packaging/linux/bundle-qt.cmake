# CPack pre-build script (CPACK_PRE_BUILD_SCRIPTS): turns the TGZ staging tree into a relocatable
# bundle that runs on a Linux machine with no Qt and none of Brook's other libraries installed.
#   - Qt plugins Brook needs (platforms xcb/offscreen/minimal, xcb GL integrations, SQLite, image
#     formats, input methods) are copied to lib/qt6/plugins; bin/qt.conf points Qt at them and at
#     share/qt6/translations (Qt's own zh_CN strings).
#   - Every library the programs and those plugins load, as ldd resolves them, is copied to lib/
#     under its soname, except the base system (glibc, libstdc++, GL/X11 drivers, fontconfig): those
#     must come from the machine the bundle runs on.
#   - The executables' RPATH ($ORIGIN/../lib, set in cmake/BrookPackaging.cmake) is a DT_RPATH, so
#     it also serves the libraries' own dependencies and the plugins' (a DT_RUNPATH would not).
#   - The copyright files of the Debian packages the libraries come from go to share/doc/brook/third-party.
# Other generators (DEB, NSIS, ZIP) pass through untouched.
if(NOT CPACK_GENERATOR STREQUAL "TGZ" OR WIN32)
  return()
endif()

set(_root "${CPACK_TEMPORARY_INSTALL_DIRECTORY}")
set(_plugins_out "${_root}/lib/qt6/plugins")
message(STATUS "bundle-qt: making ${_root} self-contained")

# Base system libraries, never bundled (glibc, the C++ runtime, the GPU driver stack, X11,
# fonts): one regular expression per line in base-libraries.txt, shared with the tarball test.
file(STRINGS "${CPACK_BROOK_BASE_LIBRARIES}" _base_regex REGEX "^[^#]")

# Prints ldd's view of FILE as "soname|path" items in OUT; fails on a library ldd cannot find.
function(_brook_ldd file out)
  execute_process(COMMAND env -u LD_LIBRARY_PATH ldd "${file}"
                  OUTPUT_VARIABLE _text ERROR_VARIABLE _err RESULT_VARIABLE _rc)
  if(_rc)
    message(FATAL_ERROR "bundle-qt: ldd ${file} failed: ${_err}")
  endif()
  string(REPLACE "\n" ";" _lines "${_text}")
  set(_items "")
  foreach(_line IN LISTS _lines)
    if(_line MATCHES "^[ \t]*([^ \t]+) => not found")
      message(FATAL_ERROR "bundle-qt: ${file} needs ${CMAKE_MATCH_1}, which ldd cannot find")
    elseif(_line MATCHES "^[ \t]*([^ \t]+) => (/[^ \t]+)")
      list(APPEND _items "${CMAKE_MATCH_1}|${CMAKE_MATCH_2}")
    endif()
  endforeach()
  set(${out} "${_items}" PARENT_SCOPE)
endfunction()

function(_brook_is_base soname out)
  foreach(_re IN LISTS _base_regex)
    if(soname MATCHES "${_re}")
      set(${out} TRUE PARENT_SCOPE)
      return()
    endif()
  endforeach()
  set(${out} FALSE PARENT_SCOPE)
endfunction()

# 1. The programs' own dependencies decide which Qt modules (and so which plugins) are in play.
file(GLOB _programs "${_root}/bin/*")
list(FILTER _programs EXCLUDE REGEX "\\.conf$")
set(_deps "")
foreach(_program IN LISTS _programs)
  _brook_ldd("${_program}" _items)
  list(APPEND _deps ${_items})
endforeach()
list(REMOVE_DUPLICATES _deps)

# 2. Qt plugins: only for programs that link Qt GUI.
set(_uses_gui FALSE)
set(_uses_network FALSE)
foreach(_item IN LISTS _deps)
  if(_item MATCHES "^libQt6Gui\\.so")
    set(_uses_gui TRUE)
  elseif(_item MATCHES "^libQt6Network\\.so")
    set(_uses_network TRUE)
  endif()
endforeach()
set(_plugin_files "")
if(_uses_gui)
  set(_qt_plugins "${CPACK_BROOK_QT_PLUGIN_DIR}")
  if(NOT EXISTS "${_qt_plugins}/platforms/libqxcb.so")
    message(FATAL_ERROR "bundle-qt: no Qt platform plugins under '${_qt_plugins}'")
  endif()
  set(_patterns platforms/libqxcb.so platforms/libqoffscreen.so platforms/libqminimal.so platforms/libqwayland*.so
      xcbglintegrations/*.so sqldrivers/libqsqlite.so imageformats/*.so platforminputcontexts/*.so iconengines/*.so
      wayland-*/*.so)
  if(_uses_network)
    list(APPEND _patterns tls/*.so networkinformation/*.so)
  endif()
  foreach(_pattern IN LISTS _patterns)
    file(GLOB _found RELATIVE "${_qt_plugins}" "${_qt_plugins}/${_pattern}")
    foreach(_rel IN LISTS _found)
      get_filename_component(_sub "${_rel}" DIRECTORY)
      file(COPY "${_qt_plugins}/${_rel}" DESTINATION "${_plugins_out}/${_sub}")
      list(APPEND _plugin_files "${_plugins_out}/${_rel}")
    endforeach()
  endforeach()
  foreach(_plugin IN LISTS _plugin_files)
    _brook_ldd("${_plugin}" _items)
    list(APPEND _deps ${_items})
  endforeach()
  list(REMOVE_DUPLICATES _deps)

  file(WRITE "${_root}/bin/qt.conf"
    "# Written by packaging/linux/bundle-qt.cmake: Qt finds its plugins and translations in this bundle.\n"
    "[Paths]\nPrefix = ..\nPlugins = lib/qt6/plugins\nTranslations = share/qt6/translations\n")
  file(GLOB _qms "${CPACK_BROOK_QT_TRANSLATIONS_DIR}/qtbase_zh_CN.qm")
  if(_qms)
    file(COPY ${_qms} DESTINATION "${_root}/share/qt6/translations")
  endif()
endif()

# 3. Copy every non-base library under the name the loader asks for.
set(_copied "")
foreach(_item IN LISTS _deps)
  string(REPLACE "|" ";" _pair "${_item}")
  list(GET _pair 0 _soname)
  list(GET _pair 1 _path)
  _brook_is_base("${_soname}" _is_base)
  string(FIND "${_path}" "${_root}/" _inside)
  if(_is_base OR _inside EQUAL 0 OR EXISTS "${_root}/lib/${_soname}")
    continue()
  endif()
  file(REAL_PATH "${_path}" _real)
  file(COPY_FILE "${_real}" "${_root}/lib/${_soname}")
  file(CHMOD "${_root}/lib/${_soname}" FILE_PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
  list(APPEND _copied "${_real}")
endforeach()
list(LENGTH _copied _count)
list(LENGTH _plugin_files _plugin_count)
message(STATUS "bundle-qt: ${_count} libraries and ${_plugin_count} Qt plugins bundled")

# 4. License texts of what was bundled (Qt is LGPL-3: its libraries stay replaceable files in lib/).
find_program(_dpkg_query dpkg-query)
if(_dpkg_query AND _copied)
  set(_names "")
  foreach(_real IN LISTS _copied)
    get_filename_component(_name "${_real}" NAME)
    list(APPEND _names "${_name}")
  endforeach()
  execute_process(COMMAND ${_dpkg_query} -S ${_names} OUTPUT_VARIABLE _owners ERROR_QUIET)
  string(REPLACE "\n" ";" _owners "${_owners}")
  set(_packages "")
  foreach(_line IN LISTS _owners)
    if(_line MATCHES "^([^:,]+)(:[^:]+)?: ")
      list(APPEND _packages "${CMAKE_MATCH_1}")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES _packages)
  file(MAKE_DIRECTORY "${_root}/share/doc/brook/third-party")
  foreach(_package IN LISTS _packages)
    if(EXISTS "/usr/share/doc/${_package}/copyright")
      file(COPY_FILE "/usr/share/doc/${_package}/copyright" "${_root}/share/doc/brook/third-party/${_package}.copyright")
    endif()
  endforeach()
  list(JOIN _packages "\n  " _package_lines)
  file(WRITE "${_root}/share/doc/brook/third-party/README"
    "The libraries in lib/ and the Qt plugins in lib/qt6/plugins are unmodified copies from these\n"
    "Debian packages; each one's license is in <package>.copyright beside this file. Qt is used under\n"
    "the LGPL-3.0: replace any lib/libQt6*.so.6 with your own build of the same Qt version.\n  ${_package_lines}\n")
endif()

# 5. The user unit cannot know where the tarball is unpacked: it assumes ~/.local/opt/brook.
set(_unit "${_root}/lib/systemd/user/brook-serve.service")
if(EXISTS "${_unit}")
  file(READ "${_unit}" _text)
  string(REGEX REPLACE "ExecStart=[^ \n]*/brook-serve" "ExecStart=%h/.local/opt/brook/bin/brook-serve" _text "${_text}")
  string(REPLACE "[Service]\n" "[Service]\n# From the tarball: unpacked (or linked) as ~/.local/opt/brook; edit ExecStart otherwise.\n" _text "${_text}")
  file(WRITE "${_unit}" "${_text}")
endif()

# 6. Check: every program now finds all its non-base libraries inside the bundle.
foreach(_program IN LISTS _programs)
  _brook_ldd("${_program}" _items)
  foreach(_item IN LISTS _items)
    string(REPLACE "|" ";" _pair "${_item}")
    list(GET _pair 0 _soname)
    list(GET _pair 1 _path)
    _brook_is_base("${_soname}" _is_base)
    string(FIND "${_path}" "${_root}/" _inside)
    if(NOT _is_base AND NOT _inside EQUAL 0)
      message(FATAL_ERROR "bundle-qt: ${_program} still loads ${_soname} from ${_path}")
    endif()
  endforeach()
endforeach()
