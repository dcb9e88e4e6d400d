// A Prometheus endpoint for the telemetry end-to-end tests, in a process of its own: it listens
// on a free loopback port, prints `listening on 127.0.0.1:PORT`, and answers every GET with the
// file named on its command line (read again for each request), until it is killed.

#include <arpa/inet.h>
#include <cstdio>
#include <fstream>
#include <netinet/in.h>
#include <sstream>
#include <string>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s FILE\n", argv[0]);
        return 2;
    }
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::listen(fd, 16) != 0 || ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
        std::perror("metrics fixture");
        return 1;
    }
    std::printf("listening on 127.0.0.1:%u\n", static_cast<unsigned>(ntohs(a.sin_port)));
    std::fflush(stdout);
    for (;;) {
        const int c = ::accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
        if (c < 0)
            continue;
        std::string request;
        char buf[4096];
        while (request.find("\r\n\r\n") == std::string::npos) {
            const ssize_t n = ::read(c, buf, sizeof buf);
            if (n <= 0)
                break;
            request.append(buf, static_cast<std::size_t>(n));
        }
        std::ifstream in(argv[1], std::ios::binary);
        std::ostringstream body;
        body << in.rdbuf();
        const std::string b = body.str();
        const std::string head = "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\n"
                                 "Connection: close\r\nContent-Length: " +
                                 std::to_string(b.size()) + "\r\n\r\n";
        const std::string all = head + b;
        std::size_t sent = 0;
        while (sent < all.size()) {
            const ssize_t n = ::write(c, all.data() + sent, all.size() - sent);
            if (n <= 0)
                break;
            sent += static_cast<std::size_t>(n);
        }
        ::close(c);
    }
}
