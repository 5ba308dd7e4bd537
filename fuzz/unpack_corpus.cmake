# cmake -DARCHIVE=A.tar.xz -DDESTINATION=D -P unpack_corpus.cmake: D emptied, then A unpacked into it.
file(REMOVE_RECURSE "${DESTINATION}")
file(MAKE_DIRECTORY "${DESTINATION}")
file(ARCHIVE_EXTRACT INPUT "${ARCHIVE}" DESTINATION "${DESTINATION}")
