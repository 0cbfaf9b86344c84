// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// ERC-721-style mint: every mint reads and bumps the shared `nextId` counter (slot 0).
contract Nft {
    uint256 public nextId; // slot 0
    mapping(uint256 => address) public ownerOf; // slot 1
    mapping(address => uint256) public balanceOf; // slot 2

    event Transfer(address indexed from, address indexed to, uint256 indexed tokenId);

    function mint(address to) external returns (uint256 id) {
        id = nextId++;
        ownerOf[id] = to;
        balanceOf[to] += 1;
        emit Transfer(address(0), to, id);
    }
}
