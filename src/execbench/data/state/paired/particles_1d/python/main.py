import sys


class Particle:
    def __init__(self, position, velocity):
        self.position = position
        self.velocity = velocity
        self.bounces = 0


steps = int(sys.stdin.read().split()[0])
width = 50
particles = [Particle(3 * i + 1, i % 5 - 2) for i in range(8)]
collisions = 0
for step in range(steps):
    for p in particles:
        p.position += p.velocity
        if p.position < 0:
            p.position = -p.position
            p.velocity = -p.velocity
            p.bounces += 1
        elif p.position > width:
            p.position = 2 * width - p.position
            p.velocity = -p.velocity
            p.bounces += 1
    for i in range(len(particles) - 1):
        if particles[i].position == particles[i + 1].position:
            collisions += 1
print(" ".join(str(p.position) for p in particles))
print(" ".join(str(p.bounces) for p in particles))
print(collisions)
