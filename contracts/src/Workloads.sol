// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// Writes `count` fresh storage slots (keccak of the caller, a salt and the index).
contract StorageSpam {
    function spam(uint256 salt, uint256 count) external {
        for (uint256 i = 0; i < count; i++) {
            bytes32 slot = keccak256(abi.encode(msg.sender, salt, i));
            assembly { sstore(slot, add(i, 1)) }
        }
    }

    /// Overwrites `count` existing slots `first, first + stride, ...` (cold SSTOREs into a
    /// large storage: the `sstore-bloated` workload).
    function overwrite(uint256 first, uint256 stride, uint256 count, uint256 value) external {
        for (uint256 i = 0; i < count; i++) {
            uint256 slot = first + i * stride;
            assembly { sstore(slot, value) }
        }
    }
}

/// A keccak loop: `rounds` hashes chained in scratch memory (constant memory, so the cost
/// per round is flat and a single call can fill a whole block).
contract Compute {
    function hash(bytes32 seed, uint256 rounds) external pure returns (bytes32 h) {
        h = seed;
        for (uint256 i = 0; i < rounds; i++) {
            assembly {
                mstore(0, h)
                mstore(32, i)
                h := keccak256(0, 64)
            }
        }
    }
}

/// Each call reads the value the previous call wrote (slot 0) and writes the next: a chain
/// of dependencies through one slot.
contract SerialChain {
    uint256 public value; // slot 0

    function step() external returns (uint256 next) {
        next = uint256(keccak256(abi.encode(value)));
        value = next;
    }
}

/// Calls precompiles in a loop: ecrecover (0x01), modexp (0x05), point evaluation (0x0a).
contract Precompiles {
    function run(uint8 which, uint256 rounds, bytes calldata input) external view returns (bytes32 acc) {
        address target = which == 0 ? address(0x01) : which == 1 ? address(0x05) : address(0x0a);
        for (uint256 i = 0; i < rounds; i++) {
            (bool ok, bytes memory out) = target.staticcall(input);
            require(ok, "precompile");
            acc ^= keccak256(out);
        }
    }
}
