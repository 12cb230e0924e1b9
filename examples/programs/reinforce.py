"""REINFORCE on a small deterministic environment, in the style of pytorch/examples' reinforcement_learning:
a policy network, torch.distributions.Categorical, log probabilities kept per episode, discounted returns
normalized with NumPy's float32 epsilon, and Adam. Run it with PyTorch or gradiente: the output is the same."""
import numpy as np

import gradiente as torch
import gradiente.nn as nn
import gradiente.nn.functional as F
import gradiente.optim as optim
from gradiente.distributions import Categorical

torch.manual_seed(543)
eps = np.finfo(np.float32).eps.item()


class Corridor:
    """Walk a corridor of 6 cells from the left end; the right end pays 1, each step costs 0.01."""

    def reset(self):
        self.position = 0
        return self.observe()

    def observe(self):
        state = np.zeros(6, dtype=np.float32)
        state[self.position] = 1.0
        return state

    def step(self, action):
        self.position = max(0, self.position + (1 if action == 1 else -1))
        done = self.position == 5
        return self.observe(), (1.0 if done else -0.01), done


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.affine1 = nn.Linear(6, 32)
        self.dropout = nn.Dropout(p=0.2)
        self.affine2 = nn.Linear(32, 2)
        self.saved_log_probs = []
        self.rewards = []

    def forward(self, x):
        x = self.affine1(x)
        x = self.dropout(x)
        x = F.relu(x)
        action_scores = self.affine2(x)
        return F.softmax(action_scores, dim=1)


policy = Policy()
optimizer = optim.Adam(policy.parameters(), lr=1e-2)
env = Corridor()


def select_action(state):
    state = torch.from_numpy(state).float().unsqueeze(0)
    probs = policy(state)
    m = Categorical(probs)
    action = m.sample()
    policy.saved_log_probs.append(m.log_prob(action))
    return action.item()


def finish_episode(gamma=0.99):
    R = 0
    policy_loss = []
    returns = []
    for r in policy.rewards[::-1]:
        R = r + gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + eps)
    for log_prob, R in zip(policy.saved_log_probs, returns):
        policy_loss.append(-log_prob * R)
    optimizer.zero_grad()
    policy_loss = torch.cat(policy_loss).sum()
    policy_loss.backward()
    optimizer.step()
    del policy.rewards[:]
    del policy.saved_log_probs[:]
    return policy_loss.item()


running_reward = 0
for i_episode in range(1, 31):
    state, ep_reward = env.reset(), 0
    for t in range(1, 50):
        action = select_action(state)
        state, reward, done = env.step(action)
        policy.rewards.append(reward)
        ep_reward += reward
        if done:
            break
    running_reward = 0.05 * ep_reward + (1 - 0.05) * running_reward
    loss = finish_episode()
    if i_episode % 5 == 0:
        print(f"Episode {i_episode}\tLast reward: {ep_reward:.2f}\tAverage reward: {running_reward:.2f}"
              f"\tloss {loss:.4f}\tsteps {t}")
