package core

const sysMembarrier = 324
