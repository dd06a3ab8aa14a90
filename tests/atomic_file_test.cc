// Whole-or-nothing file writes (lib/atomic_file.h): concurrent writers of one path never mix
// their bytes, no file of the user's beside the target is touched, and a path that cannot be
// written is an error naming it and why.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "atomic_file.h"
#include "ktune/error.h"
#include "log_fixtures.h"

using namespace ktune;

namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("atomic file: concurrent writers leave one whole version, nothing else", "[io]") {
  test::TempDir dir;
  const std::string path = dir.file("out.jsonl");
  std::ofstream(path + ".tmp") << "the user's own file\n";  // must survive
  const std::string a(200000, 'a'), b(300000, 'b');
  std::vector<std::thread> writers;
  for (const std::string* content : {&a, &b, &a, &b})
    writers.emplace_back([&, content] {
      for (int i = 0; i < 20; ++i)
        detail::write_file_atomically(path, [&](std::ostream& out) { out << *content; });
    });
  for (auto& t : writers) t.join();
  const std::string result = read_all(path);
  CHECK((result == a || result == b));
  CHECK(read_all(path + ".tmp") == "the user's own file\n");
  std::size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path)) (void)entry, ++files;
  CHECK(files == 2);  // the target and the user's file: no temporary left behind
}

TEST_CASE("atomic file: a path that cannot be written names itself and why", "[io]") {
  test::TempDir dir;
  auto write_to = [](const std::string& path) {
    detail::write_file_atomically(path, [](std::ostream& out) { out << "x"; });
  };
  CHECK_THROWS_WITH(write_to(dir.file("missing/sub/out.jsonl")),
                    Catch::Contains("'" + dir.file("missing/sub/out.jsonl") + "'") &&
                        Catch::Contains("does not exist") && !Catch::Contains(".tmp"));
  std::filesystem::create_directory(dir.file("folder"));
  CHECK_THROWS_WITH(write_to(dir.file("folder")), Catch::Contains("is a folder"));
  std::ofstream(dir.file("plain")) << "a file\n";
  CHECK_THROWS_WITH(write_to(dir.file("plain") + "/out.jsonl"), Catch::Contains("is not a folder"));
  // A failing writer leaves the previous version and no temporary file.
  write_to(dir.file("kept"));
  CHECK_THROWS_AS(detail::write_file_atomically(dir.file("kept"),
                                                [](std::ostream&) { throw Error(ErrorCode::io_error, "boom"); }),
                  Error);
  CHECK(read_all(dir.file("kept")) == "x");
  std::size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path)) (void)entry, ++files;
  CHECK(files == 3);  // folder, plain, kept
}

TEST_CASE("atomic file: permissions kept, links followed, FIFOs written through", "[io]") {
  namespace fs = std::filesystem;
  test::TempDir dir;
  auto write = [](const std::string& path, const std::string& text) {
    detail::write_file_atomically(path, [&](std::ostream& out) { out << text; });
  };
  // A private file stays private when replaced.
  const std::string secret = dir.file("private.jsonl");
  std::ofstream(secret) << "old\n";
  fs::permissions(secret, fs::perms::owner_read | fs::perms::owner_write);
  write(secret, "new\n");
  CHECK(read_all(secret) == "new\n");
  CHECK((fs::status(secret).permissions() & fs::perms::all) ==
        (fs::perms::owner_read | fs::perms::owner_write));
  // A symbolic link keeps pointing at its target, which gets the content (also a relative link
  // to a file not created yet).
  const std::string real = dir.file("real.jsonl"), link = dir.file("link.jsonl");
  std::ofstream(real) << "target\n";
  fs::create_symlink("real.jsonl", link);
  write(link, "through the link\n");
  CHECK(fs::is_symlink(link));
  CHECK(read_all(real) == "through the link\n");
  const std::string dangling = dir.file("dangling.jsonl");
  fs::create_symlink("later.jsonl", dangling);
  write(dangling, "created\n");
  CHECK(fs::is_symlink(dangling));
  CHECK(read_all(dir.file("later.jsonl")) == "created\n");
  // A link that loops is refused, and stays a link.
  const std::string loop = dir.file("loop.jsonl");
  fs::create_symlink("loop.jsonl", loop);
  CHECK_THROWS_AS(write(loop, "lost\n"), Error);
  CHECK(fs::is_symlink(loop));
  // A FIFO is written to, not replaced by a regular file.
  const std::string fifo = dir.file("pipe");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::string received;
  std::thread reader([&] { received = read_all(fifo); });
  write(fifo, "streamed\n");
  reader.join();
  CHECK(received == "streamed\n");
  CHECK(fs::is_fifo(fifo));
}

TEST_CASE("atomic file: a library file replaces a link or a FIFO at its path, through a hidden temporary", "[io]") {
  namespace fs = std::filesystem;
  test::TempDir dir;
  auto replace = [](const std::string& path, const std::string& text) {
    detail::write_file_atomically(path, [&](std::ostream& out) { out << text; },
                                  detail::AtomicTarget::library_file);
  };
  // A link is replaced, not followed: the file it pointed at keeps its content.
  const std::string outside = dir.file("outside.txt"), link = dir.file("entry.cubin");
  std::ofstream(outside) << "not the cache's\n";
  fs::create_symlink(outside, link);
  replace(link, "entry\n");
  CHECK_FALSE(fs::is_symlink(link));
  CHECK(read_all(link) == "entry\n");
  CHECK(read_all(outside) == "not the cache's\n");
  // A FIFO is replaced without waiting for a reader (a write through it would block).
  const std::string fifo = dir.file("entry.json");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  replace(fifo, "{}\n");
  CHECK(fs::is_regular_file(fifo));
  CHECK(read_all(fifo) == "{}\n");
  // Temporaries are hidden and gone: the folder holds the three names and nothing else.
  std::size_t files = 0;
  for (const auto& entry : fs::directory_iterator(dir.path)) (void)entry, ++files;
  CHECK(files == 3);
}
