# The library's C sources, relative to native/: the one list every build reads.
# native/CMakeLists.txt includes this file, and the Python package's setup.py
# parses it (plain set() calls, one name and its files each), so a source added
# here is compiled by CMake and by `pip install` alike.
set(ND_COMMON_SOURCES
  src/buffers.c src/cursor.c src/dir.c src/error.c src/file.c src/fits.c src/handle.c src/input.c src/memory.c src/mutex.c
  src/name.c src/os_handle.c src/output.c src/policy.c src/prefetch.c src/ring.c src/ring_files.c src/ring_slots.c src/version.c)
set(ND_POSIX_SOURCES
  src/posix/dir.c src/posix/errors.c src/posix/file.c src/posix/fsync.c src/posix/map.c src/posix/memory.c src/posix/os_handle.c src/posix/prefetch.c
  src/posix/ring_threads.c src/posix/ring_uring.c src/posix/thread.c
  src/posix/writer.c)
set(ND_WINDOWS_SOURCES
  src/windows/dir.c src/windows/errors.c src/windows/file.c src/windows/map.c src/windows/memory.c
  src/windows/os_handle.c
  src/windows/prefetch.c
  src/windows/ring_iocp.c src/windows/thread.c src/windows/writer.c)
