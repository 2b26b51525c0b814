#include <iostream>
#include <vector>
using namespace std;

struct Particle {
    int position;
    int velocity;
    int bounces;
};

int main() {
    int steps;
    cin >> steps;
    int width = 50;
    vector<Particle> particles;
    for (int i = 0; i < 8; ++i) {
        particles.push_back(Particle{3 * i + 1, i % 5 - 2, 0});
    }
    int collisions = 0;
    for (int step = 0; step < steps; ++step) {
        for (Particle& p : particles) {
            p.position += p.velocity;
            if (p.position < 0) {
                p.position = -p.position;
                p.velocity = -p.velocity;
                p.bounces += 1;
            } else if (p.position > width) {
                p.position = 2 * width - p.position;
                p.velocity = -p.velocity;
                p.bounces += 1;
            }
        }
        for (size_t i = 0; i + 1 < particles.size(); ++i) {
            if (particles[i].position == particles[i + 1].position) {
                collisions += 1;
            }
        }
    }
    for (size_t i = 0; i < particles.size(); ++i) {
        cout << particles[i].position << (i + 1 < particles.size() ? " " : "\n");
    }
    for (size_t i = 0; i < particles.size(); ++i) {
        cout << particles[i].bounces << (i + 1 < particles.size() ? " " : "\n");
    }
    cout << collisions << "\n";
    return 0;
}
