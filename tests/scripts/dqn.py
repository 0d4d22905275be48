"""A DQN agent (replay memory, target network with soft updates, SmoothL1Loss, AdamW with amsgrad, gradient
value clipping) on a small chain environment, in the style of the PyTorch DQN tutorial."""
import random, math
from collections import deque, namedtuple
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(0); random.seed(0); np.random.seed(0)
Transition = namedtuple("Transition", ("state", "action", "next_state", "reward"))

class ReplayMemory:
    def __init__(self, capacity): self.memory = deque([], maxlen=capacity)
    def push(self, *args): self.memory.append(Transition(*args))
    def sample(self, batch_size): return random.sample(self.memory, batch_size)
    def __len__(self): return len(self.memory)

class DQN(nn.Module):
    def __init__(self, n_obs, n_act):
        super().__init__()
        self.layer1 = nn.Linear(n_obs, 64); self.layer2 = nn.Linear(64, 64); self.layer3 = nn.Linear(64, n_act)
    def forward(self, x):
        x = F.relu(self.layer1(x)); x = F.relu(self.layer2(x)); return self.layer3(x)

class Env:  # a 1-D chain: move left/right, reward at the right end
    def __init__(self): self.n = 8
    def reset(self): self.s = 0; return self.obs()
    def obs(self): o = np.zeros(self.n, dtype=np.float32); o[self.s] = 1; return o
    def step(self, a):
        self.s = max(0, min(self.n - 1, self.s + (1 if a == 1 else -1)))
        done = self.s == self.n - 1
        return self.obs(), (1.0 if done else -0.01), done

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
env = Env()
policy_net = DQN(8, 2).to(device); target_net = DQN(8, 2).to(device)
target_net.load_state_dict(policy_net.state_dict())
optimizer = optim.AdamW(policy_net.parameters(), lr=1e-3, amsgrad=True)
memory = ReplayMemory(10000)
steps_done = 0
def select_action(state):
    global steps_done
    eps = 0.05 + 0.85 * math.exp(-1. * steps_done / 200); steps_done += 1
    if random.random() > eps:
        with torch.no_grad():
            return policy_net(state).max(1).indices.view(1, 1)
    return torch.tensor([[random.randrange(2)]], device=device, dtype=torch.long)

def optimize_model():
    if len(memory) < 64: return None
    transitions = memory.sample(64)
    batch = Transition(*zip(*transitions))
    non_final_mask = torch.tensor(tuple(map(lambda s: s is not None, batch.next_state)), device=device, dtype=torch.bool)
    non_final_next_states = torch.cat([s for s in batch.next_state if s is not None])
    state_batch = torch.cat(batch.state); action_batch = torch.cat(batch.action); reward_batch = torch.cat(batch.reward)
    state_action_values = policy_net(state_batch).gather(1, action_batch)
    next_state_values = torch.zeros(64, device=device)
    with torch.no_grad():
        next_state_values[non_final_mask] = target_net(non_final_next_states).max(1).values
    expected = (next_state_values * 0.99) + reward_batch
    criterion = nn.SmoothL1Loss()
    loss = criterion(state_action_values, expected.unsqueeze(1))
    optimizer.zero_grad(); loss.backward()
    torch.nn.utils.clip_grad_value_(policy_net.parameters(), 100)
    optimizer.step()
    return loss.item()

lengths = []
for ep in range(60):
    state = torch.tensor(env.reset(), dtype=torch.float32, device=device).unsqueeze(0)
    for t in range(100):
        action = select_action(state)
        obs, reward, done = env.step(action.item())
        reward = torch.tensor([reward], device=device)
        next_state = None if done else torch.tensor(obs, dtype=torch.float32, device=device).unsqueeze(0)
        memory.push(state, action, next_state, reward)
        state = next_state
        optimize_model()
        tsd = target_net.state_dict(); psd = policy_net.state_dict()
        for key in psd: tsd[key] = psd[key] * 0.005 + tsd[key] * (1 - 0.005)
        target_net.load_state_dict(tsd)
        if done: break
    lengths.append(t + 1)
print("mean episode length, last 10:", sum(lengths[-10:]) / 10)
print(f"RESULT {sum(lengths[-10:]) / 10:.2f}")
