/* Print SimGrid's route between every pair of hosts of a platform, as link names.
   Build: g++ -O1 -std=c++17 dump_routes.cpp -o dump_routes -lsimgrid
   Usage: dump_routes PLATFORM.xml > routes.txt
   Output: one line per ordered pair "SRC DST LATENCY LINK1 LINK2 ..." (hosts by name). */
#include <simgrid/s4u.hpp>
#include <cstdio>

int main(int argc, char** argv)
{
  simgrid::s4u::Engine e(&argc, argv);
  e.load_platform(argv[1]);
  auto hosts = e.get_all_hosts();
  std::sort(hosts.begin(), hosts.end(), [](const simgrid::s4u::Host* a, const simgrid::s4u::Host* b) {
    return a->get_name().size() != b->get_name().size() ? a->get_name().size() < b->get_name().size()
                                                        : a->get_name() < b->get_name();
  });
  for (auto const* src : hosts)
    for (auto const* dst : hosts) {
      if (src == dst)
        continue;
      std::vector<simgrid::s4u::Link*> links;
      double lat = 0;
      src->route_to(dst, links, &lat);
      std::printf("%s %s %.9g", src->get_cname(), dst->get_cname(), lat);
      for (auto const* l : links)
        std::printf(" %s", l->get_cname());
      std::printf("\n");
    }
  return 0;
}
